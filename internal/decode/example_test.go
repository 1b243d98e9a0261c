package decode_test

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"

	"github.com/guise-http/guise/internal/decode"
)

func Example() {
	var body bytes.Buffer
	zw := gzip.NewWriter(&body)
	zw.Write([]byte("hello, browser"))
	zw.Close()

	// The response's Content-Encoding field lines, as received.
	codings, ok, err := decode.Chain([]string{"GZIP"})
	if err != nil || !ok {
		fmt.Println("pass the body through undecoded:", ok, err)
		return
	}
	r, err := decode.NewReader(&body, codings, 10<<20)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer r.Close()
	out, err := io.ReadAll(r)
	fmt.Printf("%s %v %v\n", out, codings, err)
	// Output: hello, browser [gzip] <nil>
}
