// Command compat-driver sends analytics calls through the real analytics-go client
// library, v2.1.1 as released, to a Segment-compatible endpoint, then prints a JSON
// manifest of what it sent for the compatibility suite (test/compat) to check against
// what arrived on the ingest topic.
//
// Settings by environment: COMPAT_ENDPOINT (base URL; the library appends /v1/batch),
// COMPAT_WRITE_KEY, COMPAT_RUN_ID (makes the ids of one run unique).
//
// v2 has Identify, Track, Page, Group and Alias; it has no Screen call. After the five
// calls the program runs the identity switch of the library's spec: track as an
// anonymous id, alias it to a user id, identify that user, track as that user.
package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"
	// The suite runs this program with a non-UTC TZ; embedding the zone database makes
	// that work on machines without /usr/share/zoneinfo.
	_ "time/tzdata"

	analytics "github.com/segmentio/analytics-go"
	"github.com/segmentio/backo-go"
)

// sentCall is one call as the caller made it, in the Segment message model: the fields
// the ingest record must carry. The library fills in messageId.
type sentCall struct {
	Type         string         `json:"type"`
	MessageID    string         `json:"messageId"`
	UserID       string         `json:"userId,omitempty"`
	AnonymousID  string         `json:"anonymousId,omitempty"`
	Event        string         `json:"event,omitempty"`
	Name         string         `json:"name,omitempty"`
	Category     string         `json:"category,omitempty"`
	GroupID      string         `json:"groupId,omitempty"`
	PreviousID   string         `json:"previousId,omitempty"`
	Properties   map[string]any `json:"properties,omitempty"`
	Traits       map[string]any `json:"traits,omitempty"`
	Context      map[string]any `json:"context,omitempty"`
	Integrations map[string]any `json:"integrations,omitempty"`
	Timestamp    string         `json:"timestamp,omitempty"`
}

// wireRequest is one HTTP request the library made and what the endpoint answered.
type wireRequest struct {
	Path     string            `json:"path"`
	Headers  map[string]string `json:"headers"`
	Body     json.RawMessage   `json:"body"`
	Status   int               `json:"status,omitempty"`
	Response string            `json:"response,omitempty"`
	Error    string            `json:"error,omitempty"`
}

type library struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

type manifest struct {
	Client   string        `json:"client"`
	Library  library       `json:"library"`
	Calls    []sentCall    `json:"calls"`
	Requests []wireRequest `json:"requests"`
	Errors   []string      `json:"errors"`
}

// recorder sits under the library's http.Client and keeps every request and answer,
// because the library itself only logs a failed upload: Close() returns nil regardless.
type recorder struct {
	next     http.RoundTripper
	writeKey string
	mu       sync.Mutex
	requests []wireRequest
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	body, err := io.ReadAll(req.Body)
	req.Body.Close()
	if err != nil {
		return nil, err
	}
	out := req.Clone(req.Context())
	out.Body = io.NopCloser(bytes.NewReader(body))
	entry := wireRequest{Path: req.URL.Path, Headers: r.headers(req.Header), Body: json.RawMessage(body)}

	res, err := r.next.RoundTrip(out)
	if err != nil {
		entry.Error = err.Error()
	} else {
		answer, readErr := io.ReadAll(res.Body)
		res.Body.Close()
		res.Body = io.NopCloser(bytes.NewReader(answer))
		entry.Status = res.StatusCode
		entry.Response = string(answer)
		if readErr != nil {
			entry.Error = readErr.Error()
		}
	}
	r.mu.Lock()
	r.requests = append(r.requests, entry)
	r.mu.Unlock()
	return res, err
}

// headers as the library set them, with the credentials described rather than shown.
// Content-Length is left out: the library sets it to string(len(body)), one rune, and
// net/http ignores that header and writes the real length.
func (r *recorder) headers(header http.Header) map[string]string {
	out := map[string]string{}
	for name, values := range header {
		lower := strings.ToLower(name)
		switch lower {
		case "content-length":
		case "authorization":
			out[lower] = describeAuthorization(values[0], r.writeKey)
		default:
			out[lower] = strings.Join(values, ", ")
		}
	}
	return out
}

func describeAuthorization(value, writeKey string) string {
	scheme, credentials, _ := strings.Cut(value, " ")
	if !strings.EqualFold(scheme, "basic") {
		return scheme + " <credentials>"
	}
	decoded, err := base64.StdEncoding.DecodeString(credentials)
	if err == nil && string(decoded) == writeKey+":" {
		return "Basic <write key>:<empty password>"
	}
	return "Basic <other credentials>"
}

// lockedBuffer collects the library's log: with Verbose off it logs only failed uploads.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) lines() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var lines []string
	for _, line := range strings.Split(b.buf.String(), "\n") {
		if strings.TrimSpace(line) != "" {
			lines = append(lines, line)
		}
	}
	return lines
}

func requiredEnv(name string) string {
	value := os.Getenv(name)
	if value == "" {
		fmt.Fprintf(os.Stderr, "compat-driver: %s is required\n", name)
		os.Exit(2)
	}
	return value
}

func main() {
	endpoint := requiredEnv("COMPAT_ENDPOINT")
	writeKey := requiredEnv("COMPAT_WRITE_KEY")
	runID := requiredEnv("COMPAT_RUN_ID")

	rec := &recorder{next: http.DefaultTransport, writeKey: writeKey}
	var logged lockedBuffer

	client := analytics.New(writeKey)
	client.Endpoint = endpoint
	// Four messages per batch: nine calls make three requests, two of them sent
	// concurrently by the library's upload goroutines.
	client.Size = 4
	client.Interval = time.Second
	client.Client = http.Client{Transport: rec, Timeout: 10 * time.Second}
	client.Logger = log.New(io.MultiWriter(os.Stderr, &logged), "analytics-go ", log.LstdFlags)
	// The library retries a failed upload ten times with backoff capped at 10 s; a
	// refusing endpoint should fail the suite in seconds, not minutes.
	analytics.Backo = backo.NewBacko(50*time.Millisecond, 2, 0, 500*time.Millisecond)

	calls := []sentCall{}
	errs := []string{}
	record := func(err error, call sentCall, messageID string) {
		if err != nil {
			errs = append(errs, fmt.Sprintf("%s call refused by the library: %v", call.Type, err))
			return
		}
		call.MessageID = messageID
		calls = append(calls, call)
	}

	user := "go-user-" + runID
	anon := "go-anon-" + runID
	// The library's own timestamp format (strftime %z: no colon, whole seconds), in a
	// zone east of UTC, and RFC 3339 with milliseconds west of UTC.
	historicIdentify := time.Date(2015, 3, 14, 15, 9, 26, 0, time.UTC).In(time.FixedZone("CET", 3600)).Format("2006-01-02T15:04:05-0700")
	historicGroup := time.Date(2016, 3, 1, 7, 59, 59, 250_000_000, time.UTC).In(time.FixedZone("PST", -8*3600)).Format("2006-01-02T15:04:05.000Z07:00")

	identify := &analytics.Identify{
		UserId: user,
		Traits: map[string]any{
			"name":     "Zoë Ångström",
			"city":     "東京",
			"motto":    "naïve café & <crème brûlée> 🚀",
			"plan":     map[string]any{"tier": "pro", "seats": 5, "addons": []any{"sso", "audit"}},
			"vip":      true,
			"score":    9.75,
			"nickname": nil,
		},
		Context: map[string]any{
			"ip":       "203.0.113.7",
			"locale":   "nb-NO",
			"campaign": map[string]any{"name": "vår-kampanje", "source": "nyhetsbrev"},
		},
		Message: analytics.Message{Timestamp: historicIdentify},
	}
	record(client.Identify(identify), sentCall{Type: "identify", UserID: user, Traits: identify.Traits, Context: identify.Context, Timestamp: historicIdentify}, identify.MessageId)

	track := &analytics.Track{
		UserId: user,
		Event:  "Order Completed — ✓",
		Properties: map[string]any{
			"orderId":  "ord-" + runID,
			"revenue":  12.5,
			"currency": "EUR",
			"products": []any{map[string]any{"sku": "sku-1", "name": "Café au lait", "quantity": 2}},
			"shipping": map[string]any{"address": map[string]any{"city": "Zürich", "zip": "8001"}},
		},
		Integrations: map[string]any{"All": false, "Webhooks": true, "Mixpanel": false},
	}
	record(client.Track(track), sentCall{Type: "track", UserID: user, Event: track.Event, Properties: track.Properties, Integrations: track.Integrations}, track.MessageId)

	// v2 puts Page.Traits on the wire as "properties" (its JSON tag), which is where the
	// Segment model keeps a page's url, title, referrer and path.
	page := &analytics.Page{
		UserId:   user,
		Name:     "Pricing",
		Category: "Docs",
		Traits: map[string]any{
			"url":      "https://example.com/pricing?ref=søk",
			"title":    "Prix & Tarifs – Tributary",
			"referrer": "https://example.org/",
			"path":     "/pricing",
		},
	}
	record(client.Page(page), sentCall{Type: "page", UserID: user, Name: page.Name, Category: page.Category, Properties: page.Traits}, page.MessageId)

	group := &analytics.Group{
		UserId:  user,
		GroupId: "go-group-" + runID,
		Traits:  map[string]any{"name": "Acme Åland Oy", "employees": 42, "address": map[string]any{"country": "FI", "city": "Mariehamn"}},
		Message: analytics.Message{Timestamp: historicGroup},
	}
	record(client.Group(group), sentCall{Type: "group", UserID: user, GroupID: group.GroupId, Traits: group.Traits, Timestamp: historicGroup}, group.MessageId)

	alias := &analytics.Alias{PreviousId: anon, UserId: user}
	record(client.Alias(alias), sentCall{Type: "alias", UserID: user, PreviousID: anon}, alias.MessageId)

	// The identity switch, with ids of its own.
	switchAnon := "go-switch-anon-" + runID
	switchUser := "go-switch-user-" + runID

	anonymousTrack := &analytics.Track{AnonymousId: switchAnon, Event: "Viewed Pricing", Properties: map[string]any{"plan": "team"}}
	record(client.Track(anonymousTrack), sentCall{Type: "track", AnonymousID: switchAnon, Event: anonymousTrack.Event, Properties: anonymousTrack.Properties}, anonymousTrack.MessageId)

	switchAlias := &analytics.Alias{PreviousId: switchAnon, UserId: switchUser}
	record(client.Alias(switchAlias), sentCall{Type: "alias", UserID: switchUser, PreviousID: switchAnon}, switchAlias.MessageId)

	switchIdentify := &analytics.Identify{UserId: switchUser, Traits: map[string]any{"email": "kari.nordmann@example.com", "name": "Kari Nordmann"}}
	record(client.Identify(switchIdentify), sentCall{Type: "identify", UserID: switchUser, Traits: switchIdentify.Traits}, switchIdentify.MessageId)

	knownTrack := &analytics.Track{UserId: switchUser, Event: "Started Trial", Properties: map[string]any{"plan": "team", "trialDays": 14}}
	record(client.Track(knownTrack), sentCall{Type: "track", UserID: switchUser, Event: knownTrack.Event, Properties: knownTrack.Properties}, knownTrack.MessageId)

	client.Close()

	rec.mu.Lock()
	requests := append([]wireRequest{}, rec.requests...)
	rec.mu.Unlock()
	out := manifest{
		Client:   "analytics-go",
		Library:  library{Name: "analytics-go", Version: analytics.Version},
		Calls:    calls,
		Requests: requests,
		Errors:   append(errs, logged.lines()...),
	}
	encoder := json.NewEncoder(os.Stdout)
	if err := encoder.Encode(out); err != nil {
		fmt.Fprintf(os.Stderr, "compat-driver: writing the manifest: %v\n", err)
		os.Exit(1)
	}
}
