package guise

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
)

// TestResponseHeaderCounts sends heads with field counts on both sides of
// every size class newH1Response chooses from, and checks that each
// Response holds every field, in order, with its body and status.
func TestResponseHeaderCounts(t *testing.T) {
	for _, n := range []int{1, 3, 4, 5, 8, 9, 16, 17, 32, 33, 70} {
		var head strings.Builder
		head.WriteString("HTTP/1.1 200 OK\r\n")
		for i := 1; i < n; i++ { // field n is Content-Length
			fmt.Fprintf(&head, "X-Field-%d: value %d\r\n", i, i)
		}
		head.WriteString("Content-Length: 5\r\n\r\nhello")
		raw := []byte(head.String())
		tr := &Transport{DialContext: func(context.Context, string, string) (net.Conn, error) {
			return &cannedConn{resp: raw}, nil
		}}
		s := &Session{Transport: tr}
		for range 2 { // the second on the kept-alive connection
			resp, err := s.Get(context.Background(), "http://example.test/")
			if err != nil {
				t.Fatalf("%d fields: %v", n, err)
			}
			if len(resp.Header) != n {
				t.Fatalf("%d fields: Response has %d", n, len(resp.Header))
			}
			for i := 1; i < n; i++ {
				if f := resp.Header[i-1]; f.Name != fmt.Sprintf("X-Field-%d", i) || f.Value != fmt.Sprintf("value %d", i) {
					t.Fatalf("%d fields: field %d is %s: %s", n, i, f.Name, f.Value)
				}
			}
			b, err := resp.Bytes()
			if err != nil || string(b) != "hello" || resp.StatusCode != 200 {
				t.Fatalf("%d fields: status %d, body %q, %v", n, resp.StatusCode, b, err)
			}
		}
		s.Close()
		tr.Close()
	}
}
