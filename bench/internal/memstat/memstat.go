// Package memstat serves a process's Go memory figures for the benchmark
// driver, which reads RSS itself from /proc.
package memstat

import (
	"encoding/json"
	"net/http"
	"runtime"
	"runtime/debug"
)

// Mem is one snapshot of the Go runtime's memory.
type Mem struct {
	HeapInuse  uint64 `json:"heapInuse"`
	HeapAlloc  uint64 `json:"heapAlloc"`
	StackInuse uint64 `json:"stackInuse"`
	Sys        uint64 `json:"sys"`
	Goroutines int    `json:"goroutines"`
}

// Read collects garbage, returns freed memory to the OS (so RSS read next
// reflects live memory) and snapshots the runtime's figures.
func Read() Mem {
	runtime.GC()
	debug.FreeOSMemory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)

	return Mem{
		HeapInuse: ms.HeapInuse, HeapAlloc: ms.HeapAlloc, StackInuse: ms.StackInuse, Sys: ms.Sys,
		Goroutines: runtime.NumGoroutine(),
	}
}

// Handler answers GET with Read() as JSON.
func Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(Read())
	})
}
