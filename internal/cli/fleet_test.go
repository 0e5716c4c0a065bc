package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// fleetKubeconfig writes a kubeconfig whose contexts name the given
// servers.
func fleetKubeconfig(t *testing.T, servers map[string]string) string {
	t.Helper()
	var clusters, contexts strings.Builder
	for name, server := range servers {
		clusters.WriteString("- {name: " + name + "-cluster, cluster: {server: \"" + server + "\"}}\n")
		contexts.WriteString("- {name: \"" + name + "\", context: {cluster: " + name + "-cluster, user: u}}\n")
	}
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kc, []byte("apiVersion: v1\nkind: Config\nclusters:\n"+clusters.String()+
		"users: [{name: u, user: {token: t}}]\ncontexts:\n"+contexts.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return kc
}

// closedURL is an address nothing listens on.
func closedURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr
}

// TestFleetOneUnreachable: one context answers, one refuses connections.
// The one that answers is audited and its report written; the other is a
// row with its error, and the run exits 2, the worst of the two.
func TestFleetOneUnreachable(t *testing.T) {
	srv := httptest.NewServer(&liveAPI{})
	defer srv.Close()
	kc := fleetKubeconfig(t, map[string]string{"up": srv.URL, "arn:aws:eks:eu-west-1:1:cluster/down": closedURL(t)})
	dir := filepath.Join(t.TempDir(), "reports")
	code, out, errOut := runKubegap(t, "audit", "--kubeconfig", kc, "--all-contexts", "-o", "json", "--output-dir", dir, "--request-timeout", "5s")
	if code != ExitError {
		t.Fatalf("exit %d, want 2 (one context unreachable); stderr %q", code, errOut)
	}
	var sum FleetSummary
	if err := json.Unmarshal([]byte(out), &sum); err != nil {
		t.Fatalf("summary is not JSON: %v\n%s", err, out)
	}
	if sum.Kind != FleetKind || len(sum.Clusters) != 2 || sum.Totals.Audited != 1 || sum.Totals.Errors != 1 || sum.Totals.ExitCode != ExitError {
		t.Fatalf("summary = %+v", sum)
	}
	byName := map[string]FleetCluster{}
	for _, c := range sum.Clusters {
		byName[c.Context] = c
	}
	up, down := byName["up"], byName["arn:aws:eks:eu-west-1:1:cluster/down"]
	if up.Status != "audited" || up.ServerVersion != "v1.35.4" || up.Report != filepath.Join(dir, "up.json") {
		t.Errorf("up = %+v", up)
	}
	if up.Checks.Partial+up.Checks.NotEvaluated == 0 {
		t.Errorf("up: the fake serves only nodes and pods, yet no check is partial: %+v", up.Checks)
	}
	if down.Status != "error" || down.ExitCode != ExitError || !strings.Contains(down.Error, "cannot read the API server at http://127.0.0.1:") || down.Report != "" {
		t.Errorf("down = %+v", down)
	}
	if !strings.Contains(errOut, `could not audit context "arn:aws:eks:eu-west-1:1:cluster/down": cannot read the API server`) {
		t.Errorf("stderr does not name the unreachable context: %q", errOut)
	}
	b, err := os.ReadFile(up.Report)
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Kind   string
		Source struct{ Context string }
	}
	if err := json.Unmarshal(b, &rep); err != nil || rep.Kind != "AuditReport" || rep.Source.Context != "up" {
		t.Errorf("up's report: %v %+v", err, rep)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("output dir holds %d files, want 1 (no report for the unreachable context)", len(entries))
	}
}

// TestFleetSummaryFormats: text and Markdown name every context with its
// counts; the summary format follows -o unless --summary-format is given.
func TestFleetSummaryFormats(t *testing.T) {
	srv := httptest.NewServer(&liveAPI{})
	defer srv.Close()
	kc := fleetKubeconfig(t, map[string]string{"a": srv.URL, "b": srv.URL})
	code, out, errOut := runKubegap(t, "audit", "--kubeconfig", kc, "--contexts", "b,a", "-q")
	if code != ExitOK {
		t.Fatalf("exit %d; stderr %q", code, errOut)
	}
	if errOut != "" {
		t.Errorf("-q: stderr %q", errOut)
	}
	if !strings.HasPrefix(out, "kubegap fleet audit: 2 contexts audited; no findings; exit 0") {
		t.Errorf("text summary:\n%s", out)
	}
	ia, ib := strings.Index(out, "\na "), strings.Index(out, "\nb ")
	if ia < 0 || ib < 0 || ib > ia {
		t.Errorf("rows are not in the order given (b, a):\n%s", out)
	}
	_, md, _ := runKubegap(t, "audit", "--kubeconfig", kc, "--contexts", "a,b", "-q", "-o", "markdown")
	if !strings.Contains(md, "| CONTEXT | VERSION |") || !strings.Contains(md, "| a | v1.35.4 |") {
		t.Errorf("markdown summary:\n%s", md)
	}
	_, yml, _ := runKubegap(t, "audit", "--kubeconfig", kc, "--contexts", "a", "-q", "-o", "sarif", "--summary-format", "yaml")
	if !strings.Contains(yml, "kind: FleetSummary") {
		t.Errorf("yaml summary:\n%s", yml)
	}
}

// TestFleetBadInput: flags that cannot work are refused in one line, exit
// 2, before any cluster is contacted or any directory made.
func TestFleetBadInput(t *testing.T) {
	api := &liveAPI{}
	srv := httptest.NewServer(api)
	defer srv.Close()
	kc := fleetKubeconfig(t, map[string]string{"a": srv.URL})
	dir := filepath.Join(t.TempDir(), "never")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--contexts", "a,nope"}, `context "nope" is not in the kubeconfig; its contexts are "a"`},
		{[]string{"--contexts", "a", "--all-contexts"}, "cannot be combined"},
		{[]string{"--contexts", "a", "--context", "a"}, "--context names one context"},
		{[]string{"--contexts", "a", "--demo"}, "drop --from and --demo"},
		{[]string{"--contexts", "a", "--max-concurrent-contexts", "0"}, "want 1 or more"},
		{[]string{"--contexts", "a", "-o", "nope"}, "unknown output format"},
		{[]string{"--contexts", "a", "--summary-format", "html"}, "--summary-format"},
		{[]string{"--contexts", "a", "--checks", "no-such-check"}, "no-such-check"},
		{[]string{"--contexts", "a", "--baseline", "x.json"}, "--baseline"},
		{[]string{"--contexts", "a", "--server", "https://x"}, "same cluster"},
		{[]string{"--contexts", "a,"}, "empty context name"},
		{[]string{"--context", "a"}, "--output-dir writes one report per context"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			args := append([]string{"audit", "--kubeconfig", kc, "--output-dir", dir}, tc.args...)
			code, out, errOut := runKubegap(t, args...)
			wantOneErrorLine(t, code, out, errOut, tc.want)
		})
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("--output-dir made before the flags were checked: %v", err)
	}
	if len(api.requests) != 0 {
		t.Errorf("requests sent: %v", api.requests)
	}
}

func TestContextFileNames(t *testing.T) {
	got := contextFileNames([]string{"prod", "Prod", "a/b", "a_b", "..", ".hidden", "gke_p_z_c", strings.Repeat("x", 300)}, ".json")
	seen := map[string]bool{}
	for i, g := range got {
		if seen[strings.ToLower(g)] {
			t.Errorf("%q named twice (case-insensitively)", g)
		}
		seen[strings.ToLower(g)] = true
		if strings.ContainsAny(g, `/\:`) || strings.HasPrefix(g, ".") || len(g) > 200 || !strings.HasSuffix(g, ".json") {
			t.Errorf("name %d %q is not safe", i, g)
		}
	}
	if got[6] != "gke_p_z_c.json" {
		t.Errorf("a safe, unique name changed: %q", got[6])
	}
	if got[3] == "a_b.json" {
		t.Errorf("a_b keeps its name though a/b becomes a_b too: %q", got[2:4])
	}
	if got[0] == "prod.json" || !strings.HasPrefix(got[0], "prod-") {
		t.Errorf("prod and Prod would share a file on a case-insensitive file system: %q", got[:2])
	}
}

// gatedVersion holds each /version request until limit of them are in
// flight (or a bound passes), recording the most seen at once: a run that
// read more clusters at a time than --max-concurrent-contexts shows it.
type gatedVersion struct {
	api      *liveAPI
	limit    int
	mu       sync.Mutex
	inflight int
	most     int
	arrived  chan struct{}
}

func (g *gatedVersion) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/version" {
		g.api.ServeHTTP(w, r)
		return
	}
	g.mu.Lock()
	g.inflight++
	g.most = max(g.most, g.inflight)
	wait := g.arrived
	if g.inflight >= g.limit {
		// Release this group and start the next.
		close(g.arrived)
		g.arrived = make(chan struct{})
	}
	g.mu.Unlock()
	select {
	case <-wait:
	case <-time.After(2 * time.Second):
	}
	g.mu.Lock()
	g.inflight--
	g.mu.Unlock()
	g.api.ServeHTTP(w, r)
}

func TestFleetBoundedConcurrency(t *testing.T) {
	g := &gatedVersion{api: &liveAPI{}, limit: 2, arrived: make(chan struct{})}
	srv := httptest.NewServer(g)
	defer srv.Close()
	servers := map[string]string{}
	for _, n := range []string{"c1", "c2", "c3", "c4", "c5"} {
		servers[n] = srv.URL
	}
	kc := fleetKubeconfig(t, servers)
	code, out, errOut := runKubegap(t, "audit", "--kubeconfig", kc, "--all-contexts", "--max-concurrent-contexts", "2", "-q", "-o", "json")
	if code != ExitOK {
		t.Fatalf("exit %d; stderr %q", code, errOut)
	}
	var sum FleetSummary
	if err := json.Unmarshal([]byte(out), &sum); err != nil || sum.Totals.Audited != 5 {
		t.Fatalf("%v %+v", err, sum.Totals)
	}
	if g.most != 2 {
		t.Errorf("at most %d clusters were read at once, want 2 (--max-concurrent-contexts 2)", g.most)
	}
}

// TestFleetInterrupted: Ctrl-C while contexts are being read ends the run
// with exit 130 and no summary, whichever context it was waiting on.
func TestFleetInterrupted(t *testing.T) {
	release := make(chan struct{})
	stalled := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer stalled.Close()
	defer close(release)
	kc := fleetKubeconfig(t, map[string]string{"a": stalled.URL, "b": stalled.URL, "c": stalled.URL})
	ctx, cancel := context.WithCancel(context.Background())
	var out, errOut bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- Run(ctx, &App{Out: &out, ErrOut: &errOut}, []string{"audit", "--kubeconfig", kc, "--all-contexts", "--max-concurrent-contexts", "2"})
	}()
	time.Sleep(200 * time.Millisecond)
	cancel()
	select {
	case code := <-done:
		if code != ExitInterrupted || out.Len() != 0 {
			t.Errorf("exit %d, stdout %q; want 130 and no summary", code, out.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the fleet audit still waits on the stalled discovery after Ctrl-C")
	}
}
