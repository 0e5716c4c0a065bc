//go:build linux

package harness

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/kubegap/kubegap/bench/loadgen"
	"github.com/kubegap/kubegap/test/e2e/testcluster"
)

// TestBenchExporter measures kubegap exporter at scale (bench/exporter.sh):
// the duration of each scheduled audit of the loaded test bed, and the
// exporter's resident memory between audits against the same binary
// holding only the report those audits make (--bench-hold-report).
func TestBenchExporter(t *testing.T) {
	if os.Getenv("KUBEGAP_BENCH_EXPORTER") != "1" {
		t.Skip("the exporter benchmark runs from bench/exporter.sh (KUBEGAP_BENCH_EXPORTER=1)")
	}
	nodes, pods := envInt(t, "KUBEGAP_BENCH_NODES", 500), envInt(t, "KUBEGAP_BENCH_PODS", 10000)
	audits := envInt(t, "KUBEGAP_BENCH_RUNS", 3)
	interval := time.Duration(envInt(t, "KUBEGAP_BENCH_INTERVAL", 30)) * time.Second
	kubegap := filepath.Join(os.Getenv("KUBEGAP_BENCH_BIN"), "kubegap")
	var out strings.Builder
	logf := func(format string, args ...any) {
		line := fmt.Sprintf(format, args...)
		fmt.Fprintln(os.Stderr, "bench: "+line)
		out.WriteString(line + "\n")
	}
	c := testcluster.Get(t)
	admin, err := kubernetes.NewForConfig(loadgen.ClientConfig(c.Config(t, testcluster.UserAdmin)))
	if err != nil {
		t.Fatal(err)
	}
	logf("kubegap exporter benchmark: %d nodes, %d pods, --interval %s, %d scheduled audits; %d CPUs, %s",
		nodes, pods, interval, audits, runtime.NumCPU(), runtime.Version())
	st, err := loadgen.Run(t.Context(), admin, loadgen.Spec{Nodes: nodes, Pods: pods, Seed: 1}, os.Stderr)
	if err != nil {
		t.Fatalf("loading the cluster: %v", err)
	}
	logf("loaded %d pods in %.1f s; load average %s", pods, st.Elapsed.Seconds(), LoadAverage())
	kc := c.Kubeconfig(t, testcluster.UserReader)

	// The exporter, as the read-only user.
	exp := startServer(t, kubegap, "exporter", "--kubeconfig", kc, "--interval", interval.String())
	var durations []float64
	var rss []int64
	var last string
	for len(durations) < audits {
		m := waitMetric(t, exp.addr, "kubegap_audit_last_success_timestamp_seconds", func(v string) bool { return v != last }, interval+5*time.Minute)
		last = m["kubegap_audit_last_success_timestamp_seconds"]
		d, _ := strconv.ParseFloat(m["kubegap_audit_duration_seconds"], 64)
		// Halfway to the next audit: the memory the exporter holds between audits.
		time.Sleep(interval / 2)
		r := exp.rss(t)
		durations = append(durations, d)
		rss = append(rss, r)
		fmt.Fprintf(os.Stderr, "bench: audit %d took %.2f s; RSS %.1f MB between audits\n", len(durations), d, float64(r)/1e6)
	}
	exp.stop(t)

	// The same binary holding only the report of such an audit.
	report := filepath.Join(t.TempDir(), "report.json")
	var buf bytes.Buffer
	cmd := exec.Command(kubegap, "audit", "--kubeconfig", kc, "-q", "-o", "json", "--fail-on", "none")
	cmd.Stdout = &buf
	if err := cmd.Run(); err != nil {
		t.Fatalf("kubegap audit: %v", err)
	}
	if err := os.WriteFile(report, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	var held []int64
	for range audits {
		h := startServer(t, kubegap, "exporter", "--bench-hold-report", report)
		waitMetric(t, h.addr, "kubegap_audit_last_success_timestamp_seconds", func(string) bool { return true }, time.Minute)
		time.Sleep(interval / 2)
		held = append(held, h.rss(t))
		h.stop(t)
	}
	slices.Sort(durations)
	medRSS, medHeld := medianInt(rss), medianInt(held)
	logf("load average after measuring: %s", LoadAverage())
	logf("")
	logf("%-52s %8s %8s %8s", "", "median", "min", "max")
	logf("%-52s %7.2fs %7.2fs %7.2fs", "scheduled audit (kubegap_audit_duration_seconds)", durations[len(durations)/2], durations[0], durations[len(durations)-1])
	logf("%-52s %6.1fMB %6.1fMB %6.1fMB", "exporter RSS between audits", mb(medRSS), mb(slices.Min(rss)), mb(slices.Max(rss)))
	logf("%-52s %6.1fMB %6.1fMB %6.1fMB", "same binary holding the report alone", mb(medHeld), mb(slices.Min(held)), mb(slices.Max(held)))
	logf("report: %.1f MB of JSON", float64(buf.Len())/1e6)
	logf("ratio: %.2f", float64(medRSS)/float64(medHeld))
	if o := os.Getenv("KUBEGAP_BENCH_OUT"); o != "" {
		if err := os.WriteFile(o, []byte(out.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func mb(n int64) float64 { return float64(n) / 1e6 }

func medianInt(xs []int64) int64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

// benchServer is a kubegap exporter the benchmark started.
type benchServer struct {
	cmd  *exec.Cmd
	addr string
	log  *bytes.Buffer
}

func startServer(t *testing.T, argv ...string) *benchServer {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	s := &benchServer{addr: addr, log: &bytes.Buffer{}}
	s.cmd = exec.Command(argv[0], append(argv[1:], "--listen", addr)...)
	s.cmd.Stdout, s.cmd.Stderr = io.Discard, s.log
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if s.cmd.ProcessState == nil {
			s.stop(t)
		}
	})
	return s
}

func (s *benchServer) stop(t *testing.T) {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	if err := s.cmd.Wait(); err != nil {
		t.Errorf("%v: %v\n%s", s.cmd.Args, err, s.log.String())
	}
}

// rss is the process's resident set now (VmRSS), in bytes.
func (s *benchServer) rss(t *testing.T) int64 {
	t.Helper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", s.cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb * 1024
		}
	}
	t.Fatal("no VmRSS")
	return 0
}

// waitMetric scrapes addr until the sample named key satisfies ok, and
// returns every unlabelled kubegap sample of that scrape.
func waitMetric(t *testing.T, addr, key string, ok func(string) bool, within time.Duration) map[string]string {
	t.Helper()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		if resp, err := http.Get("http://" + addr + "/metrics"); err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			m := map[string]string{}
			for _, line := range strings.Split(string(b), "\n") {
				if name, v, found := strings.Cut(line, " "); found && strings.HasPrefix(name, "kubegap_") && !strings.Contains(name, "{") {
					m[name] = v
				}
			}
			if v, has := m[key]; has && ok(v) {
				return m
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("no %s within %s", key, within)
	return nil
}
