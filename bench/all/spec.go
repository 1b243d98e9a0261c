package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

var (
	h1Clients  = []string{"guise", "net/http", "fasthttp", "tls-client", "raw", "wreq-js"}
	h2Clients  = []string{"guise", "net/http", "tls-client", "wreq-js"}
	h3Clients  = []string{"guise-h3", "quic-go-h3", "guise-h2"}
	isoClients = []string{"guise.Do", "guise new Session", "net/http", "tls-client new client", "wreq-js fetch"}
)

// workloads are the report's tables, in order.
func workloads() []workload {
	return []workload{
		{"h1/small-c16", "HTTP/1.1 keep-alive small GETs, 16 concurrent (benchserver, plain)", "µs", h1Clients, []string{"net/http", "fasthttp", "raw"}},
		{"h1-tls/small-c16", "TLS HTTP/1.1 keep-alive small GETs, 16 concurrent (benchserver)", "µs", h1Clients, []string{"net/http", "fasthttp", "raw"}},
		{"h2/h2-small-c16", "HTTP/2 small GETs, 16 concurrent on one connection (nghttpd)", "µs", h2Clients, []string{"net/http", "tls-client"}},
		{"h2/isolated-https-c1", "Isolated HTTPS GET: a new TCP+TLS connection each (nghttpd, HelloRetryRequest to P-256)", "µs", isoClients, []string{"net/http", "tls-client new client"}},
		{"h2/h2-download-8m", "HTTP/2 8 MiB download (nghttpd)", "ms", h2Clients[:3], []string{"net/http"}},
		{"bulk/chunked-8m", "HTTP/1.1 8 MiB chunked download, streamed (benchserver)", "ms", h1Clients[:5], []string{"net/http", "raw"}},
		{"upload/upload-32m", "HTTP/1.1 32 MiB upload (benchserver)", "ms", h1Clients[:5], []string{"net/http", "raw"}},
		{"h3/small-c16", "HTTP/3 small GETs, 16 concurrent on one connection (quic-go's HTTP/3 server; guise-h2: Go's HTTP/2 server)", "µs", h3Clients, []string{"quic-go-h3", "guise-h2"}},
		{"h3/download-8m", "HTTP/3 8 MiB download (quic-go's HTTP/3 server; guise-h2: Go's HTTP/2 server)", "ms", h3Clients, []string{"quic-go-h3"}},
		{"h3/handshake", "HTTP/3 GET on a new connection each (quic-go's HTTP/3 server; guise-h2: TCP+TLS to Go's HTTP/2 server)", "µs", h3Clients, []string{"quic-go-h3"}},
		{"inproc/gzip-4k", "4 KiB gzip body decoded (in process; wall time)", "µs", []string{"guise", "net/http"}, []string{"net/http"}},
		{"inproc/reused-request", "Session.Do with a reused Request (in process; wall time)", "µs", []string{"guise"}, nil},
	}
}

// targets are issue 16's and (h3) issue 15's, as this bench measures them.
func targets() []target {
	return []target{
		{what: "isolated GET ≤ 0.9x net/http's CPU", a: ref{"h2/isolated-https-c1", "guise.Do"}, b: ref{"h2/isolated-https-c1", "net/http"}, m: cpuOf, limit: 0.9},
		{what: "isolated GET ≤ 0.7x tls-client's CPU", a: ref{"h2/isolated-https-c1", "guise.Do"}, b: ref{"h2/isolated-https-c1", "tls-client new client"}, m: cpuOf, limit: 0.7},
		{what: "h2 c16 ≤ 0.5x net/http's CPU", a: ref{"h2/h2-small-c16", "guise"}, b: ref{"h2/h2-small-c16", "net/http"}, m: cpuOf, limit: 0.5},
		{what: "h2 c16 ≤ 1.5x guise's TLS HTTP/1.1 c16", a: ref{"h2/h2-small-c16", "guise"}, b: ref{"h1-tls/small-c16", "guise"}, m: cpuOf, limit: 1.5, remark: "two runs and servers (nghttpd, benchserver), rounds paired by number"},
		{what: "h2 c16 ≤ 3 allocations per request", a: ref{"h2/h2-small-c16", "guise"}, m: allocsOf, limit: 3},
		{what: "h1 c16 ≤ 0.87x fasthttp's CPU", a: ref{"h1/small-c16", "guise"}, b: ref{"h1/small-c16", "fasthttp"}, m: cpuOf, limit: 0.87},
		{what: "TLS h1 c16 ≤ 0.87x fasthttp's CPU", a: ref{"h1-tls/small-c16", "guise"}, b: ref{"h1-tls/small-c16", "fasthttp"}, m: cpuOf, limit: 0.87},
		{what: "h1 c16 ≤ 3 allocations, a new Request per call", a: ref{"h1/small-c16", "guise"}, m: allocsOf, limit: 3},
		{what: "TLS h1 c16 ≤ 3 allocations, a new Request per call", a: ref{"h1-tls/small-c16", "guise"}, m: allocsOf, limit: 3},
		{what: "h1 ≤ 1 allocation with a reused Request", a: ref{"inproc/reused-request", "guise"}, m: allocsOf, limit: 1},
		{what: "h3 c16 ≤ 1.5x guise's h2 c16 CPU", a: ref{"h3/small-c16", "guise-h3"}, b: ref{"h3/small-c16", "guise-h2"}, m: cpuOf, limit: 1.5},
		{what: "h3 c16 ≤ 0.7x quic-go's http3 CPU", a: ref{"h3/small-c16", "guise-h3"}, b: ref{"h3/small-c16", "quic-go-h3"}, m: cpuOf, limit: 0.7},
		{what: "h3 8 MiB download: MB/s per CPU ≥ quic-go's (CPU per download ≤ 1x)", a: ref{"h3/download-8m", "guise-h3"}, b: ref{"h3/download-8m", "quic-go-h3"}, m: cpuOf, limit: 1},
		{what: "h3 handshake ≤ 1.1x quic-go's CPU", a: ref{"h3/handshake", "guise-h3"}, b: ref{"h3/handshake", "quic-go-h3"}, m: cpuOf, limit: 1.1},
		{what: "kept: 8 MiB download ≤ 0.5x net/http's CPU (h2)", a: ref{"h2/h2-download-8m", "guise"}, b: ref{"h2/h2-download-8m", "net/http"}, m: cpuOf, limit: 0.5},
		{what: "kept: 8 MiB download ≤ 0.5x net/http's CPU (HTTP/1.1 chunked)", a: ref{"bulk/chunked-8m", "guise"}, b: ref{"bulk/chunked-8m", "net/http"}, m: cpuOf, limit: 0.5},
		{what: "the floor under it: the raw client's 8 MiB chunked CPU ≤ 0.5x net/http's", a: ref{"bulk/chunked-8m", "raw"}, b: ref{"bulk/chunked-8m", "net/http"}, m: cpuOf, limit: 0.5, remark: "not a target: if not met, no Go client meets the one above"},
		{what: "kept: 32 MiB upload within 1.1x the raw client's CPU", a: ref{"upload/upload-32m", "guise"}, b: ref{"upload/upload-32m", "raw"}, m: cpuOf, limit: 1.1},
		{what: "kept: gzip 4 KiB ≤ 0.67x net/http's", a: ref{"inproc/gzip-4k", "guise"}, b: ref{"inproc/gzip-4k", "net/http"}, m: cpuOf, limit: 0.67, remark: "wall time in process, server included"},
	}
}

// drawCharts writes the charts and their README into dir.
func drawCharts(rs runs, dir, command string, at time.Time) error {
	headline := chart{file: "cpu-vs-nethttp", title: "Client CPU per request, relative to net/http (lower is better)", ylabel: "× net/http's CPU per request", refLine: 1}
	for _, g := range []struct{ label, key string }{
		{"HTTP/1.1 c16", "h1/small-c16"}, {"TLS HTTP/1.1 c16", "h1-tls/small-c16"},
		{"HTTP/2 c16", "h2/h2-small-c16"}, {"isolated HTTPS", "h2/isolated-https-c1"},
	} {
		var clients []string
		for _, wl := range workloads() {
			if wl.key == g.key {
				clients = wl.clients
			}
		}
		if g.key == "h2/isolated-https-c1" {
			clients = []string{"guise.Do", "tls-client new client", "wreq-js fetch"}
		}
		if bars := barsOf(rs, g.key, clients, "net/http", 1); len(bars) > 0 {
			for i := range bars {
				bars[i].client = family(bars[i].client)
			}
			headline.groups = append(headline.groups, group{label: g.label, bars: bars})
		}
	}
	charts := []chart{headline}
	per := []struct {
		file, title string
		keys        []string
		labels      []string
		unit        string
	}{
		{"h1-c16", "HTTP/1.1 small GETs, 16 concurrent: client CPU per request", []string{"h1/small-c16", "h1-tls/small-c16"}, []string{"plain", "TLS"}, "µs"},
		{"h2-c16", "HTTP/2 small GETs, 16 concurrent on one connection: client CPU per request", []string{"h2/h2-small-c16"}, []string{"HTTP/2 c16"}, "µs"},
		{"isolated", "Isolated HTTPS GET, a new TCP+TLS connection each: client CPU per request", []string{"h2/isolated-https-c1"}, []string{"isolated"}, "µs"},
		{"bulk", "Bulk transfers: client CPU per request", []string{"bulk/chunked-8m", "h2/h2-download-8m", "upload/upload-32m"}, []string{"8 MiB chunked (h1)", "8 MiB (h2)", "32 MiB upload (h1)"}, "ms"},
	}
	for _, p := range per {
		ch := chart{file: p.file, title: p.title, ylabel: "CPU " + p.unit + " per request (median, min–max whiskers)"}
		div := 1.0
		if p.unit == "ms" {
			div = 1e3
		}
		for i, key := range p.keys {
			var clients []string
			for _, wl := range workloads() {
				if wl.key == key {
					clients = wl.clients
				}
			}
			if bars := barsOf(rs, key, clients, "", div); len(bars) > 0 {
				ch.groups = append(ch.groups, group{label: p.labels[i], bars: bars})
			}
		}
		if len(ch.groups) > 0 {
			charts = append(charts, ch)
		}
	}
	var readme strings.Builder
	fmt.Fprintf(&readme, "# Benchmark charts\n\nDrawn by `%s` (from bench/) on %s: bars are medians over rounds, whiskers the rounds' min and max. See docs/BENCHMARKS.md for the run's numbers and conditions.\n\n", command, at.UTC().Format("2006-01-02 15:04 MST"))
	for _, ch := range charts {
		if len(ch.groups) == 0 {
			continue
		}
		if err := ch.save(dir); err != nil {
			return err
		}
		fmt.Fprintf(&readme, "## %s\n\n![%s](%s.svg)\n\n[PNG](%s.png)\n\n", ch.title, ch.title, ch.file, ch.file)
	}
	return os.WriteFile(filepath.Join(dir, "README.md"), []byte(readme.String()), 0o644)
}

// family names a client by its library, for the headline chart's legend.
func family(client string) string {
	for _, p := range palette {
		if strings.HasPrefix(client, p.prefix) {
			return p.prefix
		}
	}
	return client
}
