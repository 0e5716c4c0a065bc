package mcp

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// minimalAPI answers discovery (nodes and pods in the core group) and
// lists nothing; every other path is 404.
func minimalAPI(requests *atomic.Int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		w.Header().Set("Content-Type", "application/json")
		switch p := r.URL.Path; p {
		case "/version":
			fmt.Fprint(w, `{"major":"1","minor":"35","gitVersion":"v1.35.4"}`)
		case "/api":
			fmt.Fprint(w, `{"kind":"APIVersions","versions":["v1"]}`)
		case "/apis":
			fmt.Fprint(w, `{"kind":"APIGroupList","apiVersion":"v1","groups":[]}`)
		case "/api/v1":
			fmt.Fprint(w, `{"kind":"APIResourceList","groupVersion":"v1","resources":[
				{"name":"nodes","namespaced":false,"kind":"Node","verbs":["get","list"]},
				{"name":"pods","namespaced":true,"kind":"Pod","verbs":["get","list"]}]}`)
		case "/api/v1/nodes", "/api/v1/pods":
			fmt.Fprintf(w, `{"kind":"List","apiVersion":"v1","metadata":{},"items":[]}`)
		default:
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}`)
		}
	})
}

// TestAuditContexts: one call audits several contexts, each kept as its own
// audit to page; an unreachable one is a row with its error; a context
// outside --allow-context refuses the whole call before any request.
func TestAuditContexts(t *testing.T) {
	var requests atomic.Int64
	srv := httptest.NewServer(minimalAPI(&requests))
	defer srv.Close()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String()
	l.Close()
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	os.WriteFile(kc, []byte(`apiVersion: v1
kind: Config
clusters: [{name: up, cluster: {server: "`+srv.URL+`"}}, {name: down, cluster: {server: "`+closed+`"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: staging, context: {cluster: up, user: u}}, {name: prod, context: {cluster: down, user: u}}, {name: other, context: {cluster: up, user: u}}]
current-context: staging
`), 0o600)
	cs := connect(t, Options{Kubeconfig: kc, AllowContexts: []string{"staging", "prod"}})

	for args, want := range map[string]map[string]any{
		`context "other" refused`:         {"contexts": []string{"staging", "other"}},
		"context and contexts":            {"contexts": []string{"staging"}, "context": "staging"},
		"drop files/demo":                 {"contexts": []string{"staging"}, "demo": true},
		"at most 8 per call":              {"contexts": []string{"staging", "prod", "a", "b", "c", "d", "e", "f", "g"}},
		"page each context's findings":    {"contexts": []string{"staging"}, "page": 2},
		"contexts: an empty context name": {"contexts": []string{"staging", ""}},
	} {
		if msg := callErr(t, cs, ToolAudit, want); !strings.Contains(msg, args) {
			t.Errorf("%v: %q, want %q", want, msg, args)
		}
	}
	if n := requests.Load(); n != 0 {
		t.Fatalf("refused calls sent %d requests", n)
	}
	var out AuditOutput
	call(t, cs, ToolAudit, map[string]any{"contexts": []string{"staging", "prod"}}, &out)
	if len(out.Contexts) != 2 {
		t.Fatalf("contexts = %+v", out.Contexts)
	}
	up, down := out.Contexts[0], out.Contexts[1]
	if up.Context != "staging" || up.AuditID == "" || up.ServerVersion != "v1.35.4" || up.Incomplete == 0 || up.Error != "" {
		t.Errorf("staging = %+v", up)
	}
	if down.Context != "prod" || down.AuditID != "" || !strings.Contains(down.Error, "cannot read the API server") {
		t.Errorf("prod = %+v", down)
	}
	if len(out.Findings) != 0 {
		t.Errorf("a several-context response lists findings: %+v", out.Findings)
	}
	var page AuditOutput
	call(t, cs, ToolAudit, map[string]any{"audit_id": up.AuditID}, &page)
	if page.AuditID != up.AuditID || page.Source.Context != "staging" {
		t.Errorf("paging staging's audit: audit_id %q, context %q", page.AuditID, page.Source.Context)
	}
}
