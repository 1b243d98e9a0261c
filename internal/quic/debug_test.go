package quic

import (
	"fmt"
	"os"
	"time"
)

func init() {
	if os.Getenv("QDEBUG") != "" {
		debugf = func(f string, a ...any) { fmt.Fprintf(os.Stderr, time.Now().Format("05.000000 ")+f+"\n", a...) }
	}
}
