package harness

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/kubegap/kubegap/bench/loadgen"
	"github.com/kubegap/kubegap/test/e2e/testcluster"
)

func TestMain(m *testing.M) { os.Exit(testcluster.Main(m)) }

// benchConfig is what bench/run.sh passes in the environment.
type benchConfig struct {
	nodes, pods, runs int
	seed              uint64
	binDir            string // holds kubegap and floor
	out               string // the result table is written here too
}

func envInt(t *testing.T, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		t.Fatalf("%s=%q: want a non-negative integer", name, v)
	}
	return n
}

// TestBench is the whole benchmark: load once, then measure each command
// several times, interleaved so that a change in the machine's load hits
// every command alike.
func TestBench(t *testing.T) {
	if os.Getenv("KUBEGAP_BENCH") != "1" {
		t.Skip("the scale benchmark runs from bench/run.sh (KUBEGAP_BENCH=1)")
	}
	cfg := benchConfig{
		nodes:  envInt(t, "KUBEGAP_BENCH_NODES", 500),
		pods:   envInt(t, "KUBEGAP_BENCH_PODS", 10000),
		runs:   envInt(t, "KUBEGAP_BENCH_RUNS", 3),
		seed:   uint64(envInt(t, "KUBEGAP_BENCH_SEED", 1)),
		binDir: os.Getenv("KUBEGAP_BENCH_BIN"),
		out:    os.Getenv("KUBEGAP_BENCH_OUT"),
	}
	if cfg.binDir == "" {
		t.Fatal("KUBEGAP_BENCH_BIN must name the directory holding kubegap and floor")
	}
	kubegap, floorBin := filepath.Join(cfg.binDir, "kubegap"), filepath.Join(cfg.binDir, "floor")
	ctx := t.Context()
	var report strings.Builder
	logf := func(format string, args ...any) {
		line := fmt.Sprintf(format, args...)
		fmt.Fprintln(os.Stderr, "bench: "+line)
		report.WriteString(line + "\n")
	}

	c := testcluster.Get(t)
	admin, err := kubernetes.NewForConfig(loadgen.ClientConfig(c.Config(t, testcluster.UserAdmin)))
	if err != nil {
		t.Fatal(err)
	}
	logf("kubegap scale benchmark: %d nodes, %d pods, seed %d, %d runs each; %d CPUs (GOMAXPROCS %d), %s",
		cfg.nodes, cfg.pods, cfg.seed, cfg.runs, runtime.NumCPU(), runtime.GOMAXPROCS(0), runtime.Version())
	logf("load average before loading: %s", LoadAverage())
	st, err := loadgen.Run(ctx, admin, loadgen.Spec{Nodes: cfg.nodes, Pods: cfg.pods, Seed: cfg.seed}, os.Stderr)
	if err != nil {
		t.Fatalf("loading the cluster: %v", err)
	}
	logf("loaded in %.1f s:\n%s", st.Elapsed.Seconds(), st)

	kc := c.Kubeconfig(t, testcluster.UserReader)
	if hold := os.Getenv("KUBEGAP_BENCH_HOLD"); hold != "" {
		holdCluster(t, hold, kc)
	}
	snapFile := filepath.Join(t.TempDir(), "snapshot.json.gz")
	if keep := os.Getenv("KUBEGAP_BENCH_SNAPSHOT"); keep != "" {
		snapFile = keep // kept after the run, for offline profiling
	}
	type command struct {
		name string
		argv []string
		ok   []int
	}
	floorCmd := command{"floor (bench/cmd/floor)", []string{floorBin, "--kubeconfig", kc}, []int{0}}
	// Exit 1 means findings at or above --fail-on: a successful audit.
	live := command{"kubegap audit (live)", []string{kubegap, "audit", "--kubeconfig", kc, "-q", "-o", "json"}, []int{0, 1}}
	offline := command{"kubegap audit --from snapshot", []string{kubegap, "audit", "--from", snapFile, "-q", "-o", "json"}, []int{0, 1}}
	cmds := []command{floorCmd, live}
	// kubectl holds the whole list as JSON and objects: about 150 MB per
	// 1,000 pods here, so at 100k pods it would need more memory than a
	// small machine has. KUBEGAP_BENCH_KUBECTL=0 leaves it out.
	if kubectl, err := exec.LookPath("kubectl"); err == nil && os.Getenv("KUBEGAP_BENCH_KUBECTL") != "0" {
		cmds = append(cmds, command{"kubectl get pods -A -o json", []string{kubectl, "--kubeconfig", kc, "get", "pods", "-A", "-o", "json"}, []int{0}})
	}

	// One unmeasured floor run warms the API server's caches and the page
	// cache for the binaries.
	if _, err := Measure(ctx, nil, floorCmd.argv); err != nil {
		t.Fatalf("warm-up: %v", err)
	}
	snap, err := Measure(ctx, nil, []string{kubegap, "snapshot", "--kubeconfig", kc, "-q", "-o", snapFile})
	if err != nil {
		t.Fatalf("snapshot: %v", err)
	}
	fi, err := os.Stat(snapFile)
	if err != nil {
		t.Fatal(err)
	}
	cmds = append(cmds, offline)

	logf("load average before measuring: %s", LoadAverage())
	series := make([]Series, len(cmds))
	var liveOut int64
	for run := range cfg.runs {
		for i, cmd := range cmds {
			thaw := func() {}
			if cmd.name == offline.name {
				// The offline audit needs no cluster: freeze it, or the
				// API server's garbage collection after the live runs
				// takes the CPUs (measured: 3.7 s alone, 6.2-6.6 s beside it).
				thaw = c.Freeze(t)
			}
			s, err := Measure(ctx, nil, cmd.argv, cmd.ok...)
			thaw()
			if err != nil {
				t.Fatalf("run %d of %s: %v", run+1, cmd.name, err)
			}
			series[i].Name = cmd.name
			series[i].Samples = append(series[i].Samples, s)
			if cmd.name == live.name {
				liveOut = s.Stdout
			}
			fmt.Fprintf(os.Stderr, "bench: run %d %-34s %6.2f s %6.0f MB\n", run+1, cmd.name, s.Wall.Seconds(), float64(s.MaxRSS)/1e6)
		}
	}
	logf("load average after measuring: %s", LoadAverage())
	logf("snapshot: %.2f s, peak RSS %.0f MB, file %.1f MB gzipped; live report %.1f MB of JSON",
		snap.Wall.Seconds(), float64(snap.MaxRSS)/1e6, float64(fi.Size())/1e6, float64(liveOut)/1e6)
	logf("")
	report.WriteString(Table(series, live.name, floorCmd.name))
	if cfg.out != "" {
		if err := os.WriteFile(cfg.out, []byte(report.String()), 0o644); err != nil {
			t.Fatalf("writing %s: %v", cfg.out, err)
		}
	}
	t.Logf("done at %s", time.Now().Format(time.RFC3339))
}

// holdCluster keeps the loaded cluster up for profiling by hand: it writes
// the reader's kubeconfig path to file and waits until someone removes it.
func holdCluster(t *testing.T, file, kubeconfig string) {
	if err := os.WriteFile(file, []byte(kubeconfig+"\n"), 0o644); err != nil {
		t.Fatalf("KUBEGAP_BENCH_HOLD: %v", err)
	}
	fmt.Fprintf(os.Stderr, "bench: holding the cluster; kubeconfig in %s, remove it to go on\n", file)
	for {
		if _, err := os.Stat(file); os.IsNotExist(err) {
			return
		}
		select {
		case <-t.Context().Done():
			return
		case <-time.After(time.Second):
		}
	}
}
