package main

import (
	"bufio"
	"io"
	"strconv"
	"sync"
	"time"
)

// accessLog writes one JSON line per request, like TwoBits' request log (same field names, so bench.py
// reads statuses from either), buffered and flushed every 50 ms as TwoBits batches its own.
type accessLog struct {
	enabled bool
	mu      sync.Mutex
	out     *bufio.Writer
	done    chan struct{}
}

func newAccessLog(w io.Writer, enabled bool) *accessLog {
	l := &accessLog{enabled: enabled, out: bufio.NewWriterSize(w, 64*1024), done: make(chan struct{})}
	go func() {
		ticker := time.NewTicker(50 * time.Millisecond)
		defer ticker.Stop()
		for {
			select {
			case <-ticker.C:
				l.flush()
			case <-l.done:
				return
			}
		}
	}()
	return l
}

// request logs one answered request.
func (l *accessLog) request(started time.Time, method, route string, status int, requestID string) {
	if !l.enabled {
		return
	}
	now := time.Now()
	line := make([]byte, 0, 256)
	line = append(line, `{"ts":"`...)
	line = append(line, timestamp(now)...)
	level := "info"
	if status >= 500 {
		level = "error"
	}
	line = append(line, `","level":"`+level+`","msg":"request","method":"`...)
	line = append(line, method...)
	line = append(line, `","route":"`...)
	line = append(line, route...)
	line = append(line, `","status":`...)
	line = strconv.AppendInt(line, int64(status), 10)
	line = append(line, `,"duration_ms":`...)
	line = strconv.AppendFloat(line, float64(now.Sub(started).Microseconds())/1000, 'f', 3, 64)
	line = append(line, `,"request_id":"`...)
	line = append(line, requestID...)
	line = append(line, `"}`...)
	l.write(line)
}

// line logs a ready-made JSON line.
func (l *accessLog) line(text string) { l.write([]byte(text)) }

func (l *accessLog) write(line []byte) {
	l.mu.Lock()
	_, _ = l.out.Write(line)
	_ = l.out.WriteByte('\n')
	l.mu.Unlock()
}

func (l *accessLog) flush() {
	l.mu.Lock()
	_ = l.out.Flush()
	l.mu.Unlock()
}

func (l *accessLog) close() {
	close(l.done)
	l.flush()
}

// timestamp is UTC with milliseconds, as TwoBits writes "ts".
func timestamp(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.000Z")
}
