module github.com/guise-http/guise/bench

go 1.26.0

require (
	github.com/coder/websocket v1.8.15
	github.com/gorilla/websocket v1.5.3
	github.com/guise-http/guise v0.0.0
	gonum.org/v1/plot v0.17.0
)

require (
	codeberg.org/go-fonts/liberation v0.5.0 // indirect
	codeberg.org/go-latex/latex v0.2.0 // indirect
	codeberg.org/go-pdf/fpdf v0.11.1 // indirect
	git.sr.ht/~sbinet/gg v0.7.0 // indirect
	github.com/ajstarks/svgo v0.0.0-20211024235047-1546f124cd8b // indirect
	github.com/golang/freetype v0.0.0-20170609003504-e2365dfdc4a0 // indirect
	github.com/refraction-networking/utls v1.8.2 // indirect
	golang.org/x/crypto/x509roots/fallback v0.0.0-20261030153154-30a33513ff6d // indirect
	golang.org/x/image v0.30.0 // indirect
)

require (
	github.com/andybalholm/brotli v1.3.0 // indirect
	github.com/bogdanfinn/fhttp v0.6.2
	github.com/bogdanfinn/quic-go-utls v1.0.4-utls // indirect
	github.com/bogdanfinn/tls-client v1.11.2
	github.com/bogdanfinn/utls v1.7.4-barnius // indirect
	github.com/cloudflare/circl v1.5.0 // indirect
	github.com/klauspost/compress v1.20.4 // indirect
	github.com/molecule-man/go-brrr v1.3.1 // indirect
	github.com/quic-go/qpack v0.6.0 // indirect
	github.com/tam7t/hpkp v0.0.0-20160821193359-2b70b4024ed5 // indirect
	github.com/valyala/bytebufferpool v1.0.0 // indirect
	github.com/valyala/fasthttp v1.78.0
	go.uber.org/goleak v1.3.0
	go.uber.org/mock v0.5.0 // indirect
	golang.org/x/crypto v0.58.0 // indirect
	golang.org/x/mod v0.41.0 // indirect
	golang.org/x/net v0.62.0 // indirect
	golang.org/x/sync v0.25.0 // indirect
	golang.org/x/sys v0.49.0
	golang.org/x/text v0.43.0 // indirect
	golang.org/x/tools v0.51.0 // indirect
)

replace github.com/guise-http/guise => ../

// tls-client's HTTP/3 (bogdanfinn/quic-go-utls) is built on qpack v0.5's
// API; guise requires v0.6 only in internal/qpackref (the recorder's and
// tests' decoder), which this module never builds, so the bench builds
// with v0.5.1.
replace github.com/quic-go/qpack => github.com/quic-go/qpack v0.5.1
