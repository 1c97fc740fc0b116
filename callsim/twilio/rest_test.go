package twilio

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/callproof/callproof/protocol/native"
)

// A bot that ends its call through Twilio's REST API, as Pipecat's
// TwilioFrameSerializer does with base_url pointed at the stub: the
// call update with Status=completed is the agent's hang-up, and the
// stream gets Twilio's stop. Unknown calls, missing credentials and other
// updates are answered as Twilio answers them.
func TestRESTStubHangsUp(t *testing.T) {
	rest := NewREST()
	api := httptest.NewServer(rest)
	defer api.Close()
	b := newBot(t)
	c := dial(t, &Transport{Speech: toneSpeech{}, Hearing: &scriptedHearer{}, REST: rest}, b)
	b.ws(t)
	start(t, c)
	b.waitFor(t, "media", 1)

	post := func(path, user, status string) (int, string) {
		req, err := http.NewRequest(http.MethodPost, api.URL+path, strings.NewReader(url.Values{"Status": {status}}.Encode()))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if user != "" {
			req.SetBasicAuth(user, "a-token")
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	account, call := "AC0123", sid(CallPrefix, "call-1")
	path := "/2010-04-01/Accounts/" + account + "/Calls/" + call + ".json"
	code, body := post("/2010-04-01/Accounts/"+account+"/Calls/CAnone.json", account, "completed")
	assert.Equal(t, http.StatusNotFound, code)
	assert.Contains(t, body, `"code":20404`)
	code, _ = post(path, "", "completed")
	assert.Equal(t, http.StatusUnauthorized, code)
	code, _ = post(path, account, "in-progress")
	assert.Equal(t, http.StatusBadRequest, code)

	code, body = post(path, account, "completed")
	assert.Equal(t, http.StatusOK, code)
	assert.Contains(t, body, `"status":"completed"`)
	b.waitFor(t, "stop", 1)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var hung *native.Hangup
	for hung == nil {
		f, err := c.Recv(ctx)
		if err != nil {
			break
		}
		hung = f.Message.Hangup
	}
	require.NotNil(t, hung, "the REST hang-up")
	assert.Equal(t, ReasonRESTHangUp, hung.Reason)
	code, _ = post(path, account, "completed")
	assert.Equal(t, http.StatusNotFound, code, "the call has ended")
}
