// Package record is the machine-readable form of a benchmark run, which
// compare and h2compare write with -json and bench/all reads: every
// client's numbers round by round, so that ratios can be taken within a
// round (the clients alternate inside one) and their spread shown.
package record

import (
	"encoding/json"
	"os"
	"time"
)

// Run is one command's run.
type Run struct {
	Tool      string     `json:"tool"`    // "compare", "h2compare"
	Command   string     `json:"command"` // as typed, from bench/
	Date      time.Time  `json:"date"`
	Server    string     `json:"server"` // what served, and on which CPUs
	Scenarios []Scenario `json:"scenarios"`
}

// Scenario is one workload's clients.
type Scenario struct {
	Name    string   `json:"name"`
	About   string   `json:"about"`
	Clients []Client `json:"clients"`
}

// Client is one client's rounds in one scenario, in round order.
type Client struct {
	Name   string  `json:"name"`
	Err    string  `json:"err,omitempty"` // what stopped it, if anything
	Rounds []Round `json:"rounds"`
}

// Round is one measured turn.
type Round struct {
	// Index is the round's number from 0, so that a client that failed
	// half-way still pairs with the others' same rounds.
	Index int   `json:"index"`
	Ops   int64 `json:"ops"`
	// CPU is the client process's user+system CPU µs per request.
	CPU float64 `json:"cpuUsPerOp"`
	// Allocs is heap allocations per request, -1 when unknown (a
	// client outside Go).
	Allocs float64 `json:"allocsPerOp"`
	// Rate is requests/s, or MB/s for the bulk scenarios.
	Rate float64 `json:"rate"`
	// ServerCPU is the server's CPU µs per request, -1 when unknown.
	ServerCPU float64 `json:"serverCpuUsPerOp"`
}

// Write writes r to path as indented JSON.
func Write(path string, r *Run) error {
	b, err := json.MarshalIndent(r, "", " ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// Read reads a Run from path.
func Read(path string) (*Run, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r Run
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, err
	}
	return &r, nil
}
