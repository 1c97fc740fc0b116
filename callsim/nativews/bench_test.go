package nativews_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/callproof/callproof/callsim/nativews"
)

// idleConns is how many connections BenchmarkIdleConn holds at once.
const idleConns = 1000

// serverEnv makes the test binary run TestIdleConnServer for the
// benchmark instead of skipping it.
const serverEnv = "NATIVEWS_BENCH_SERVER"

// BenchmarkIdleConn reports what one idle connection retains: heap and
// goroutine stacks per connection, each with a pending Recv as callsim's
// pump always has. The agents run in a child process so their side of
// the sockets is not counted.
//
//	go test -run '^$' -bench IdleConn -benchtime 3x ./callsim/nativews/
func BenchmarkIdleConn(b *testing.B) {
	url := startServer(b)
	var sum idleCost
	for range b.N {
		c := holdIdle(b, url, idleConns)
		sum.bytes += c.bytes
		sum.stack += c.stack
		sum.goroutines += c.goroutines
	}
	n := float64(b.N)
	b.ReportMetric(sum.bytes/n, "B/conn")
	b.ReportMetric(sum.stack/n, "stackB/conn")
	b.ReportMetric(sum.goroutines/n, "goroutines/conn")
}

// idleCost is what one idle connection holds: heap and stacks (bytes),
// of which stacks, and goroutines.
type idleCost struct{ bytes, stack, goroutines float64 }

// holdIdle dials n connections, lets them go idle and returns what each
// holds, then closes them.
func holdIdle(b *testing.B, url string, n int) idleCost {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tr := &nativews.Transport{}
	before := retained()
	conns := make([]*nativews.Conn, 0, n)
	var pumps sync.WaitGroup
	defer func() {
		cancel()
		for _, c := range conns {
			_ = c.Close()
		}
		pumps.Wait()
	}()
	for range n {
		c, err := tr.Dial(ctx, url)
		if err != nil {
			b.Fatal(err)
		}
		nc := c.(*nativews.Conn)
		conns = append(conns, nc)
		// As a call has them: pings armed (none due while measuring), a
		// call deadline, and a pump blocked in Recv.
		nc.SetFrameLimit(1 << 20)
		nc.SetCallDeadline(time.Now().Add(time.Hour))
		nc.SetIdleTimeout(time.Hour)
		pumps.Add(1)
		go func() {
			defer pumps.Done()
			_, _ = nc.Recv(ctx)
		}()
	}
	time.Sleep(300 * time.Millisecond) // every pump reaches its read
	after := retained()
	per := func(a, b uint64) float64 { return (float64(a) - float64(b)) / float64(n) }
	return idleCost{
		bytes:      per(after.HeapInuse+after.StackInuse, before.HeapInuse+before.StackInuse),
		stack:      per(after.StackInuse, before.StackInuse),
		goroutines: per(uint64(after.goroutines), uint64(before.goroutines)),
	}
}

// usage is the memory in use after a full collection and the goroutines.
type usage struct {
	HeapInuse, StackInuse uint64
	goroutines            int
}

// retained collects twice (so sync.Pool's victim cache is dropped too)
// and reads what is in use.
func retained() usage {
	var m runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m)
	return usage{m.HeapInuse, m.StackInuse, runtime.NumGoroutine()}
}

// startServer runs TestIdleConnServer in a child process and returns its
// ws:// URL; the child exits when the benchmark ends.
func startServer(b *testing.B) string {
	cmd := exec.Command(os.Args[0], "-test.run=^TestIdleConnServer$")
	cmd.Env = append(os.Environ(), serverEnv+"=1")
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		_ = stdin.Close()
		_ = cmd.Wait()
	})
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if addr, ok := strings.CutPrefix(sc.Text(), "listening on "); ok {
			go func() { _, _ = io.Copy(io.Discard, stdout) }()
			return "ws://" + addr
		}
	}
	b.Fatalf("benchmark server did not start: %v", sc.Err())
	return ""
}

// TestIdleConnServer is BenchmarkIdleConn's agent side: it answers
// pings and reads until the benchmark closes its stdin. Skipped unless
// the benchmark started it.
func TestIdleConnServer(t *testing.T) {
	if os.Getenv(serverEnv) == "" {
		t.Skip("run by BenchmarkIdleConn")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	up := websocket.Upgrader{}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer ws.Close()
		for {
			if _, _, err := ws.ReadMessage(); err != nil {
				return
			}
		}
	})}
	go func() { _ = srv.Serve(l) }()
	fmt.Printf("listening on %s\n", l.Addr())
	_, _ = io.Copy(io.Discard, os.Stdin)
	_ = srv.Close()
}
