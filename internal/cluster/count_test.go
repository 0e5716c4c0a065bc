package cluster

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/kubegap/kubegap/internal/snapshot"
)

// countAPI serves n AuthRequests in pages of the requested limit, with or
// without remainingItemCount, and records every limit asked for. The real
// API server always sends the count for an unselected list (the e2e test
// checks that one LIST of limit=1 is all kubegap sends there); this one
// also covers a server that leaves it out.
type countAPI struct {
	n         int
	withCount bool
	mu        sync.Mutex
	limits    []string
}

func (a *countAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	a.mu.Lock()
	a.limits = append(a.limits, q.Get("limit"))
	a.mu.Unlock()
	limit, _ := strconv.Atoi(q.Get("limit"))
	start, _ := strconv.Atoi(q.Get("continue"))
	end := min(a.n, start+limit)
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprint(w, `{"apiVersion":"dex.coreos.com/v1","kind":"AuthRequestList","metadata":{`)
	if end < a.n {
		fmt.Fprintf(w, `"continue":"%d"`, end)
		if a.withCount {
			fmt.Fprintf(w, `,"remainingItemCount":%d`, a.n-end)
		}
	}
	fmt.Fprint(w, `},"items":[`)
	for i := start; i < end; i++ {
		if i > start {
			fmt.Fprint(w, ",")
		}
		fmt.Fprintf(w, `{"apiVersion":"dex.coreos.com/v1","kind":"AuthRequest","metadata":{"name":"r%d","namespace":"dex"}}`, i)
	}
	fmt.Fprint(w, "]}")
}

func TestCountOnly(t *testing.T) {
	cases := []struct {
		name      string
		n         int
		withCount bool
		limits    []string
	}{
		{"server counts", 1234, true, []string{"1"}},
		{"empty", 0, true, []string{"1"}},
		{"one", 1, false, []string{"1"}},
		{"no count: pages and counts", 1234, false, []string{"1", "500", "500", "500"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			api := &countAPI{n: tc.n, withCount: tc.withCount}
			srv := httptest.NewServer(api)
			defer srv.Close()
			dyn, err := dynamic.NewForConfig(ReadOnly(&rest.Config{Host: srv.URL}))
			if err != nil {
				t.Fatal(err)
			}
			opts := Options{}
			opts.defaults()
			r := &reader{dyn: dyn, opts: opts}
			part, err := r.count(context.Background(), snapshot.DexAuthRequests)
			if err != nil {
				t.Fatal(err)
			}
			if got := part.Count(snapshot.DexAuthRequests); got != tc.n {
				t.Errorf("count = %d, want %d", got, tc.n)
			}
			if len(part.CustomObjects(snapshot.DexAuthRequests)) != 0 {
				t.Error("counted objects were kept")
			}
			if fmt.Sprint(api.limits) != fmt.Sprint(tc.limits) {
				t.Errorf("limits asked = %v, want %v", api.limits, tc.limits)
			}
		})
	}
}
