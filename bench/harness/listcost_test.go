package harness

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	"github.com/kubegap/kubegap/bench/loadgen"
	"github.com/kubegap/kubegap/test/e2e/testcluster"
)

// listMode is one way of reading a resource: the page size and the
// resourceVersion a LIST sends.
type listMode struct {
	name  string
	limit int64
	rv    string // "" is a consistent read; "0" lets the watch cache answer
}

// listCost is what reading one resource once in one mode cost.
type listCost struct {
	pages   int
	bytes   int64
	wall    time.Duration // time to the last byte of every page, one after another
	cpu     float64       // kube-apiserver's process_cpu_seconds_total during the read
	objects int
}

// TestListCost measures what kubegap's reads cost the API server, per
// page: it fills the test bed with the generated cluster (bench/loadgen),
// then LISTs pods and nodes, protobuf, the way internal/cluster does
// (pages one after another, each request waiting for the previous page's
// continue token), in four modes: kubegap's (limit 500, no
// resourceVersion), resourceVersion=0 with limit 500, limit 5000 (a larger
// chunk size) and one unpaginated consistent LIST. For each it prints the
// pages, bytes and wall time of the read and the API server's CPU seconds
// (its process_cpu_seconds_total before and after), median of
// KUBEGAP_LISTCOST_RUNS (3) interleaved rounds. It runs only with
// KUBEGAP_BENCH_LISTCOST=1:
//
//	KUBEGAP_BENCH_LISTCOST=1 KUBEGAP_BENCH_PODS=10000 KUBEGAP_BENCH_NODES=500 \
//	  go test ./bench/harness -run TestListCost -v -timeout 60m
func TestListCost(t *testing.T) {
	if os.Getenv("KUBEGAP_BENCH_LISTCOST") != "1" {
		t.Skip("the LIST cost measurement runs with KUBEGAP_BENCH_LISTCOST=1")
	}
	nodes, pods, runs := envInt(t, "KUBEGAP_BENCH_NODES", 500), envInt(t, "KUBEGAP_BENCH_PODS", 10000), envInt(t, "KUBEGAP_LISTCOST_RUNS", 3)
	ctx := t.Context()
	c := testcluster.Get(t)
	adminCfg := loadgen.ClientConfig(c.Config(t, testcluster.UserAdmin))
	admin, err := kubernetes.NewForConfig(adminCfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("load average before loading: %s", LoadAverage())
	st, err := loadgen.Run(ctx, admin, loadgen.Spec{Nodes: nodes, Pods: pods, Seed: 1}, io.Discard)
	if err != nil {
		t.Fatalf("loading the cluster: %v", err)
	}
	t.Logf("loaded %d pods on %d nodes in %.1f s", pods, nodes, st.Elapsed.Seconds())

	reader := rest.CopyConfig(c.Config(t, testcluster.UserReader))
	rt, err := rest.TransportFor(reader)
	if err != nil {
		t.Fatal(err)
	}
	modes := []listMode{
		{"limit 500 (kubegap's default)", 500, ""},
		{"limit 500, resourceVersion=0", 500, "0"},
		{"limit 5000", 5000, ""},
		{"no limit (one LIST)", 0, ""},
	}
	resources := []string{"/api/v1/pods", "/api/v1/nodes"}
	// One unmeasured read of each warms the caches on both sides.
	for _, res := range resources {
		if _, err := readList(ctx, rt, reader.Host, res, modes[0], admin); err != nil {
			t.Fatal(err)
		}
	}
	results := map[string][]listCost{}
	for range runs {
		for _, res := range resources {
			for _, m := range modes {
				lc, err := readList(ctx, rt, reader.Host, res, m, admin)
				if err != nil {
					t.Fatal(err)
				}
				results[res+" "+m.name] = append(results[res+" "+m.name], lc)
			}
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "LIST cost on the test bed: %d pods, %d nodes; %d rounds, medians; %d CPUs; load average after: %s\n\n",
		pods, nodes, runs, runtime.NumCPU(), LoadAverage())
	fmt.Fprintf(&b, "| resource | mode | objects | pages | bytes | bytes per object | wall | wall per page | API server CPU | CPU per 1,000 objects |\n|---|---|---|---|---|---|---|---|---|---|\n")
	for _, res := range resources {
		for _, m := range modes {
			rs := results[res+" "+m.name]
			wall := medianOf(rs, func(l listCost) float64 { return l.wall.Seconds() })
			cpu := medianOf(rs, func(l listCost) float64 { return l.cpu })
			byt := medianOf(rs, func(l listCost) float64 { return float64(l.bytes) })
			fmt.Fprintf(&b, "| %s | %s | %d | %d | %.1f MB | %.0f B | %.2f s | %.1f ms | %.2f s | %.1f ms |\n",
				res, m.name, rs[0].objects, rs[0].pages, byt/1e6, byt/float64(rs[0].objects), wall,
				wall*1000/float64(rs[0].pages), cpu, cpu*1e6/float64(rs[0].objects))
		}
	}
	t.Log("\n" + b.String())
	if out := os.Getenv("KUBEGAP_BENCH_OUT"); out != "" {
		if err := os.WriteFile(out, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func medianOf(xs []listCost, key func(listCost) float64) float64 {
	vs := make([]float64, len(xs))
	for i, x := range xs {
		vs[i] = key(x)
	}
	slices.Sort(vs)
	return vs[len(vs)/2]
}

// readList reads every page of one resource in one mode, as the read-only
// user, protobuf, and the API server's CPU seconds around it (as admin).
func readList(ctx context.Context, rt http.RoundTripper, host, path string, m listMode, admin kubernetes.Interface) (listCost, error) {
	var lc listCost
	cpu0, err := apiserverCPU(ctx, admin)
	if err != nil {
		return lc, err
	}
	cont := ""
	for {
		q := url.Values{}
		if m.limit > 0 {
			q.Set("limit", strconv.FormatInt(m.limit, 10))
		}
		if m.rv != "" {
			q.Set("resourceVersion", m.rv)
		}
		if cont != "" {
			q.Set("continue", cont)
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, host+path+"?"+q.Encode(), nil)
		if err != nil {
			return lc, err
		}
		req.Header.Set("Accept", "application/vnd.kubernetes.protobuf")
		t0 := time.Now()
		resp, err := rt.RoundTrip(req)
		if err != nil {
			return lc, err
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		lc.wall += time.Since(t0)
		if err != nil {
			return lc, err
		}
		if resp.StatusCode != http.StatusOK {
			return lc, fmt.Errorf("GET %s: %s: %.200s", req.URL, resp.Status, body)
		}
		lc.pages++
		lc.bytes += int64(len(body))
		// Decoded outside the timed part: only the continue token and the
		// count are wanted.
		obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(body, nil, nil)
		if err != nil {
			return lc, fmt.Errorf("decoding a page of %s: %w", path, err)
		}
		lm, ok := obj.(metav1.ListInterface)
		if !ok {
			return lc, fmt.Errorf("%s: a page of %T is no list", path, obj)
		}
		lc.objects += meta.LenList(obj)
		cont = lm.GetContinue()
		if cont == "" {
			break
		}
	}
	cpu1, err := apiserverCPU(ctx, admin)
	if err != nil {
		return lc, err
	}
	lc.cpu = cpu1 - cpu0
	return lc, nil
}

// apiserverCPU is kube-apiserver's process_cpu_seconds_total.
func apiserverCPU(ctx context.Context, admin kubernetes.Interface) (float64, error) {
	body, err := admin.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return 0, fmt.Errorf("GET /metrics: %w", err)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	f := fams["process_cpu_seconds_total"]
	if f == nil || len(f.GetMetric()) == 0 {
		return 0, fmt.Errorf("/metrics has no process_cpu_seconds_total")
	}
	return f.GetMetric()[0].GetCounter().GetValue(), nil
}
