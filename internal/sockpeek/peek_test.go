package sockpeek

import (
	"net"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// waitFor polls Peek until want or a bound: a write or close on loopback
// reaches the peer's socket at once, but the test does not lean on that.
func waitFor(t *testing.T, c net.Conn, wantData, wantClosed bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		d, cl := Peek(c)
		if d == wantData && cl == wantClosed || time.Now().After(deadline) {
			assert.Equal(t, wantData, d, "data")
			assert.Equal(t, wantClosed, cl, "closed")
			return
		}
		time.Sleep(time.Millisecond)
	}
}

func TestPeekDataCloseAndNothing(t *testing.T) {
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" {
		t.Skip("no socket peek on " + runtime.GOOS)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	client, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	defer client.Close()
	server, err := ln.Accept()
	require.NoError(t, err)
	defer server.Close()

	d, cl := Peek(client)
	assert.False(t, d || cl, "nothing waiting")
	_, err = server.Write([]byte("hi"))
	require.NoError(t, err)
	waitFor(t, client, true, false)
	waitFor(t, client, true, false) // a peek consumes nothing
	buf := make([]byte, 2)
	_, err = client.Read(buf)
	require.NoError(t, err)
	require.NoError(t, server.Close())
	waitFor(t, client, false, true)
}
