package harness

import "github.com/guise-http/guise/bench/internal/peer"

// Scenario is one benchmark: a request repeated by Conc workers, each
// waiting for its response before sending the next.
type Scenario struct {
	// Name identifies the scenario on the command line and in reports.
	Name string
	// About says what is measured, for the report.
	About string
	// Path is the benchmark server's endpoint.
	Path string
	// Mode is how response bodies are consumed (GETs only).
	Mode Mode
	// Upload, when > 0, makes each request a POST of that many bytes.
	Upload int
	// Want is the response body length every request must see (for
	// FirstByte: 1; for uploads: the decimal length echoed back).
	Want int64
	// Conc is the number of concurrent workers, and the per-host
	// connection limit of every client.
	Conc int
	// Count, when > 0, fixes the number of requests per client, split
	// evenly across the rounds, instead of running each round for a
	// duration.
	Count int
	// Bytes reports throughput in MB/s of body payload rather than
	// requests per second.
	Bytes bool
	// Paired makes an upload scenario alternate Upload/2 and Upload
	// bytes, the smaller first and a turn ending only after a larger one,
	// and record each size's requests and time (Sample.Sizes): the time
	// ratio of the sizes then comes from requests seconds apart, not from
	// turns minutes apart on a machine whose speed drifts. Conc must be 1.
	Paired bool
}

// Payload is the body bytes one request moves: the upload or the expected
// response body.
func (s *Scenario) Payload() int64 {
	if s.Upload > 0 {
		return int64(s.Upload)
	}
	return s.Want
}

// Scenario sizes.
const (
	Upload32M = 32 << 20
	Upload64M = 64 << 20
)

// Scenarios returns the standard scenarios, in report order.
func Scenarios() []Scenario {
	return []Scenario{
		{Name: "small-c1", About: "GET /small (100 B, Content-Length), keep-alive, 1 worker", Path: "/small", Want: peer.SmallSize, Conc: 1},
		{Name: "small-c16", About: "GET /small (100 B, Content-Length), keep-alive, 16 workers", Path: "/small", Want: peer.SmallSize, Conc: 16},
		{Name: "chunked4k", About: "GET /chunked4k (4 KiB chunked), 1 worker", Path: "/chunked4k", Want: peer.Chunked4KSize, Conc: 1},
		{Name: "download-1m", About: "GET /1m (1 MiB, Content-Length), read to the end, 1 worker", Path: "/1m", Want: peer.OneMiBSize, Conc: 1, Bytes: true},
		{Name: "chunked-8m", About: "GET /chunked8m (8 MiB chunked) copied to io.Discard as it streams, 1 worker", Path: "/chunked8m", Mode: Stream, Want: peer.Chunked8MSize, Conc: 1, Bytes: true},
		{Name: "upload-32m", About: "POST 32 MiB (Content-Length) to /upload, 1 worker", Path: "/upload", Upload: Upload32M, Conc: 1, Bytes: true},
		{Name: "upload-scaling", About: "POST 32 MiB and 64 MiB (Content-Length) in turn to /upload, 1 worker; the row is both sizes together, the check below compares their times", Path: "/upload", Upload: Upload64M, Conc: 1, Bytes: true, Paired: true},
		{Name: "first-byte-close", About: "GET /smallchunked (64 B chunked), read 1 byte, Close; 10,000 requests, 4 workers (pool of 4)", Path: "/smallchunked", Mode: FirstByte, Want: 1, Conc: 4, Count: 10000},
	}
}
