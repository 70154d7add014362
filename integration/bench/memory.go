package main

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"time"
)

// streamResult is one pass of the large result set through a target.
type streamResult struct {
	target       string
	rows, bytes  int64
	elapsed      time.Duration
	rssBaseKB    int64 // hop's VmRSS just before the query
	rssPeakKB    int64 // highest VmRSS sampled every 50ms during the stream
	rssSamples   int
	hwmKB        int64 // hop's VmHWM (lifetime peak RSS) after the stream
	sampledHop   bool
	streamQuery  string
	sampleErrors int
}

func (r streamResult) mbps() float64 {
	if r.elapsed <= 0 {
		return 0
	}
	return float64(r.bytes) / 1e6 / r.elapsed.Seconds()
}

func streamQuery(rows int) string {
	return fmt.Sprintf("SELECT seq, REPEAT('x', 1000) FROM seq_1_to_%d", rows)
}

// streamThrough reads the whole result of streamQuery(rows) through t with
// go-sql-driver (text protocol, one connection), discarding the rows and
// counting the column bytes, while sampling the hop process's VmRSS.
func streamThrough(ctx context.Context, t sbTarget, user, password string, rows int) (streamResult, error) {
	res := streamResult{target: t.name, streamQuery: streamQuery(rows)}
	db, err := openMySQL(t.addr, user, password, "sbtest")
	if err != nil {
		return res, err
	}
	defer db.Close()
	conn, err := db.Conn(ctx)
	if err != nil {
		return res, fmt.Errorf("%s: connecting: %w", t.name, err)
	}
	defer conn.Close()

	var stopSampler func()
	if t.proc != nil {
		pid := t.proc.pid()
		if res.rssBaseKB, err = procStatusKB(pid, "VmRSS"); err != nil {
			return res, err
		}
		res.rssPeakKB, res.sampledHop = res.rssBaseKB, true
		done := make(chan struct{})
		var wg sync.WaitGroup
		var mu sync.Mutex
		wg.Add(1)
		go func() {
			defer wg.Done()
			tick := time.NewTicker(50 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-done:
					return
				case <-tick.C:
				}
				kb, err := procStatusKB(pid, "VmRSS")
				mu.Lock()
				if err != nil {
					res.sampleErrors++
				} else {
					res.rssSamples++
					res.rssPeakKB = max(res.rssPeakKB, kb)
				}
				mu.Unlock()
			}
		}()
		stopSampler = func() {
			close(done)
			wg.Wait()
		}
	}

	t0 := time.Now()
	err = func() error {
		rs, err := conn.QueryContext(ctx, res.streamQuery)
		if err != nil {
			return err
		}
		defer rs.Close()
		var seq, pad sql.RawBytes
		for rs.Next() {
			if err := rs.Scan(&seq, &pad); err != nil {
				return err
			}
			res.rows++
			res.bytes += int64(len(seq) + len(pad))
		}
		return rs.Err()
	}()
	res.elapsed = time.Since(t0)
	if stopSampler != nil {
		stopSampler()
		// One last sample now that the stream is over.
		if kb, e := procStatusKB(t.proc.pid(), "VmRSS"); e == nil {
			res.rssPeakKB = max(res.rssPeakKB, kb)
		}
		res.hwmKB, _ = procStatusKB(t.proc.pid(), "VmHWM")
	}
	if err != nil {
		return res, fmt.Errorf("%s: streaming %q: %w", t.name, res.streamQuery, err)
	}
	if res.rows != int64(rows) {
		return res, fmt.Errorf("%s: streamed %d rows, want %d", t.name, res.rows, rows)
	}
	return res, nil
}
