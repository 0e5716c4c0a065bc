package testcluster

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Timeouts for start-up. A cold kube-apiserver on a loaded 2-core machine
// needs about 20 s; the margins cover a parallel package doing the same.
const (
	etcdReadyTimeout      = 60 * time.Second
	apiserverReadyTimeout = 180 * time.Second
	stopGrace             = 5 * time.Second
	startAttempts         = 3
)

// dirPrefix names cluster directories in the temp dir; ownerFile in each
// holds the PID of the test binary that owns it.
const (
	dirPrefix = "kubegap-testbed-"
	ownerFile = "owner.pid"
)

// repoModule identifies the repository root (for hack/ and deploy/).
const repoModule = "module github.com/kubegap/kubegap"

// auditPolicy records every request at Metadata level: who did what to
// which object, without bodies. RequestReceived is dropped so each request
// yields one ResponseComplete event.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: Metadata
`

// start brings up etcd and kube-apiserver, creates the users' RBAC and
// writes the kubeconfigs. A port taken between choosing and binding it
// (another test package starting its own cluster) is retried.
func start(apiFlags []string) (*Cluster, error) {
	began := time.Now()
	root, err := repoRoot()
	if err != nil {
		return nil, err
	}
	binDir, err := binaries(root)
	if err != nil {
		return nil, err
	}
	binTime := time.Since(began)

	var c *Cluster
	for attempt := 1; ; attempt++ {
		c, err = startOnce(root, binDir, apiFlags)
		if err == nil {
			break
		}
		if attempt < startAttempts && errors.Is(err, errPortInUse) {
			fmt.Fprintf(os.Stderr, "testcluster: %v; retrying with other ports\n", err)
			continue
		}
		return nil, err
	}
	fmt.Fprintf(os.Stderr, "testcluster: test bed ready in %.1f s (binaries %.1f s) at %s, dir %s\n",
		time.Since(began).Seconds(), binTime.Seconds(), c.Host, c.Dir)
	return c, nil
}

var errPortInUse = errors.New("a chosen port was taken")

func startOnce(root, binDir string, apiFlags []string) (c *Cluster, err error) {
	sweepStaleDirs()
	dir, err := os.MkdirTemp("", dirPrefix)
	if err != nil {
		return nil, fmt.Errorf("creating the cluster directory: %w", err)
	}
	// Lets a later run remove this directory if this test binary dies
	// before its teardown (a go test -timeout panic, a kill).
	if err := os.WriteFile(filepath.Join(dir, ownerFile), []byte(strconv.Itoa(os.Getpid())), 0o600); err != nil {
		return nil, fmt.Errorf("writing the owner file: %w", err)
	}
	c = &Cluster{Dir: dir, BinDir: binDir, auditPath: filepath.Join(dir, "audit.log")}
	defer func() {
		if err != nil {
			if serr := c.stop(); serr != nil {
				err = fmt.Errorf("%w (and teardown: %v)", err, serr)
			}
		}
	}()

	ports, err := freePorts(3)
	if err != nil {
		return c, err
	}
	etcdPort, peerPort, apiPort := ports[0], ports[1], ports[2]
	c.Host = fmt.Sprintf("https://127.0.0.1:%d", apiPort)

	if err := c.writeFiles(); err != nil {
		return c, err
	}

	// etcd
	etcdBin := filepath.Join(binDir, "etcd")
	etcdURL := fmt.Sprintf("http://127.0.0.1:%d", etcdPort)
	peerURL := fmt.Sprintf("http://127.0.0.1:%d", peerPort)
	etcdArgs := []string{
		"--name=testbed",
		"--data-dir=" + filepath.Join(dir, "etcd"),
		"--listen-client-urls=" + etcdURL,
		"--advertise-client-urls=" + etcdURL,
		"--listen-peer-urls=" + peerURL,
		"--initial-advertise-peer-urls=" + peerURL,
		"--initial-cluster=testbed=" + peerURL,
		"--log-level=warn",
	}
	if etcdSupports(etcdBin, "--unsafe-no-fsync") {
		// Test data need not survive a crash; fsync dominates write cost.
		etcdArgs = append(etcdArgs, "--unsafe-no-fsync")
	}
	etcd, err := startProcess(dir, "etcd", etcdBin, etcdArgs)
	if err != nil {
		return c, err
	}
	c.procs = append(c.procs, etcd)
	if err := waitHTTP(etcd, etcdURL+"/health", "", etcdReadyTimeout, func(body []byte) bool {
		return bytes.Contains(body, []byte(`"health":"true"`))
	}); err != nil {
		return c, startError(err, etcd)
	}

	// kube-apiserver
	apiArgs := []string{
		"--etcd-servers=" + etcdURL,
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		// A loopback advertise address is refused by the default reconciler.
		"--endpoint-reconciler-type=none",
		fmt.Sprintf("--secure-port=%d", apiPort),
		"--cert-dir=" + filepath.Join(dir, "certs"),
		"--token-auth-file=" + filepath.Join(dir, "tokens.csv"),
		"--authorization-mode=RBAC",
		"--service-account-key-file=" + filepath.Join(dir, "sa.key"),
		"--service-account-signing-key-file=" + filepath.Join(dir, "sa.key"),
		"--service-account-issuer=" + c.Host,
		"--service-cluster-ip-range=10.0.0.0/24",
		// No controller-manager creates default service accounts.
		"--disable-admission-plugins=ServiceAccount",
		// Fixtures include privileged DaemonSets, as real clusters do.
		"--allow-privileged=true",
		"--audit-policy-file=" + filepath.Join(dir, "audit-policy.yaml"),
		"--audit-log-path=" + c.auditPath,
		"--audit-log-format=json",
		// Blocking: each event is written before the request's handler
		// returns, so a marker request bounds what is in the file.
		"--audit-log-mode=blocking",
		// Default rotation is at 100 MB; a load test must not rotate.
		"--audit-log-maxsize=4096",
		"--max-requests-inflight=2000",
		"--max-mutating-requests-inflight=1000",
	}
	apiArgs = append(apiArgs, apiFlags...)
	api, err := startProcess(dir, "kube-apiserver", filepath.Join(binDir, "kube-apiserver"), apiArgs)
	if err != nil {
		return c, err
	}
	c.procs = append(c.procs, api)
	if err := waitHTTP(api, c.Host+"/readyz", c.tokens[UserAdmin], apiserverReadyTimeout, func(body []byte) bool {
		return strings.TrimSpace(string(body)) == "ok"
	}); err != nil {
		return c, startError(err, etcd, api)
	}

	// The serving certificate the server generated in --cert-dir is
	// self-signed; its file is the trust root for every client.
	c.caData, err = os.ReadFile(filepath.Join(dir, "certs", "apiserver.crt"))
	if err != nil {
		return c, fmt.Errorf("reading the generated serving certificate: %w", err)
	}
	if err := c.makeClients(); err != nil {
		return c, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := c.bootstrap(ctx, root); err != nil {
		return c, startError(err, api)
	}
	return c, nil
}

// writeFiles writes the token file, the service-account key and the audit
// policy into the cluster directory.
func (c *Cluster) writeFiles() error {
	c.tokens = map[string]string{}
	var csv strings.Builder
	for _, u := range append(users(), markerUser) {
		tok, err := randomHex(16)
		if err != nil {
			return err
		}
		c.tokens[u] = tok
		// token,user,uid[,"group,..."]
		fmt.Fprintf(&csv, "%s,%s,uid-%s", tok, u, u)
		if u == UserAdmin {
			csv.WriteString(`,"system:masters"`)
		}
		csv.WriteByte('\n')
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return fmt.Errorf("generating the service-account key: %w", err)
	}
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	files := map[string][]byte{
		"tokens.csv":        []byte(csv.String()),
		"sa.key":            keyPEM,
		"audit-policy.yaml": []byte(auditPolicy),
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(c.Dir, name), data, 0o600); err != nil {
			return fmt.Errorf("writing %s: %w", name, err)
		}
	}
	return nil
}

// makeClients builds the per-user clientsets, the admin's dynamic client
// and RESTMapper, and one kubeconfig file per user.
func (c *Cluster) makeClients() error {
	c.clients = map[string]kubernetes.Interface{}
	c.kubeconfigs = map[string]string{}
	for user, tok := range c.tokens {
		cs, err := kubernetes.NewForConfig(c.config(tok))
		if err != nil {
			return fmt.Errorf("client for %s: %w", user, err)
		}
		c.clients[user] = cs
		if user == markerUser {
			continue
		}
		name := "testbed-" + user
		kc := clientcmdapi.NewConfig()
		kc.Clusters[name] = &clientcmdapi.Cluster{Server: c.Host, CertificateAuthorityData: c.caData}
		kc.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: tok}
		kc.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name, Namespace: "default"}
		kc.CurrentContext = name
		path := filepath.Join(c.Dir, "kubeconfig-"+user)
		if err := clientcmd.WriteToFile(*kc, path); err != nil {
			return fmt.Errorf("writing kubeconfig for %s: %w", user, err)
		}
		c.kubeconfigs[user] = path
	}
	admin := c.config(c.tokens[UserAdmin])
	// The test bed's own requests (emptying namespaces touches deprecated
	// kinds) should not fill test output with deprecation warnings.
	admin.WarningHandler = rest.NoWarnings{}
	dyn, err := dynamic.NewForConfig(admin)
	if err != nil {
		return fmt.Errorf("dynamic client: %w", err)
	}
	c.dynamic = dyn
	c.discovery = c.clients[UserAdmin].Discovery()
	c.mapper = restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(c.discovery))
	return nil
}

// stop ends kube-apiserver before etcd (with etcd gone first, the API
// server ignores SIGTERM) and removes the cluster directory.
func (c *Cluster) stop() error {
	var errs []error
	for i := len(c.procs) - 1; i >= 0; i-- {
		if err := c.procs[i].stop(stopGrace); err != nil {
			errs = append(errs, err)
		}
	}
	if os.Getenv("KUBEGAP_TESTBED_KEEP") == "1" {
		fmt.Fprintf(os.Stderr, "testcluster: kept %s\n", c.Dir)
	} else if c.Dir != "" {
		if err := os.RemoveAll(c.Dir); err != nil {
			errs = append(errs, fmt.Errorf("removing %s: %w", c.Dir, err))
		}
	}
	return errors.Join(errs...)
}

// startError adds the tails of the processes' logs to a start-up failure,
// and marks it retryable when a process lost a port race.
func startError(err error, procs ...*process) error {
	var sb strings.Builder
	portTaken := false
	for _, p := range procs {
		state := "running"
		if ok, werr := p.exited(); ok {
			state = fmt.Sprintf("exited: %v", werr)
		}
		tail := p.tail(40)
		if strings.Contains(tail, "address already in use") {
			portTaken = true
		}
		fmt.Fprintf(&sb, "\n--- %s (%s), last lines of %s:\n%s", p.name, state, p.log, tail)
	}
	if portTaken {
		return fmt.Errorf("%w: %w%s", errPortInUse, err, sb.String())
	}
	return fmt.Errorf("%w%s", err, sb.String())
}

// waitHTTP polls url until ready accepts a 200 response body, the process
// exits, or the timeout passes.
func waitHTTP(p *process, url, token string, timeout time.Duration, ready func([]byte) bool) error {
	client := &http.Client{
		Timeout: 5 * time.Second,
		// Only a readiness probe: the certificate is not known yet.
		Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}, //nolint:gosec
	}
	deadline := time.Now().Add(timeout)
	last := "no response"
	for time.Now().Before(deadline) {
		if ok, werr := p.exited(); ok {
			return fmt.Errorf("%s exited during start-up: %v", p.name, werr)
		}
		req, err := http.NewRequest(http.MethodGet, url, nil)
		if err != nil {
			return fmt.Errorf("probing %s: %w", p.name, err)
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := client.Do(req)
		if err == nil {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK && ready(body) {
				return nil
			}
			last = fmt.Sprintf("HTTP %d: %s", resp.StatusCode, firstLines(body, 3))
		} else {
			last = err.Error()
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("%s not ready at %s after %s (last: %s)", p.name, url, timeout, last)
}

func firstLines(b []byte, n int) string {
	lines := strings.SplitN(strings.TrimSpace(string(b)), "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, " / ")
}

// etcdSupports reports whether the etcd binary knows flag (3.4 lacks
// --unsafe-no-fsync; 3.5 and later have it).
func etcdSupports(bin, flag string) bool {
	out, _ := exec.Command(bin, "--help").CombinedOutput()
	return bytes.Contains(out, []byte(flag+" "))
}

// sweepStaleDirs removes cluster directories whose owning test binary no
// longer runs. Its processes died with it; only the files remain.
func sweepStaleDirs() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), dirPrefix+"*"))
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, ownerFile))
		if err != nil {
			continue // not ours, or still being set up
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || pid <= 0 || processAlive(pid) {
			continue
		}
		_ = os.RemoveAll(d)
	}
}

// freePorts asks the kernel for n distinct free loopback ports. They are
// free when chosen; start retries if one is taken before it is bound.
func freePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("finding a free port: %w", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

func randomHex(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("reading random bytes: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// repoRoot walks up from the working directory (go test runs in the
// package directory) to kubegap's go.mod.
func repoRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("finding the repository root: %w", err)
	}
	for d := wd; ; d = filepath.Dir(d) {
		if b, err := os.ReadFile(filepath.Join(d, "go.mod")); err == nil {
			first, _, _ := strings.Cut(string(b), "\n")
			if strings.TrimSpace(first) == repoModule {
				return d, nil
			}
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no go.mod with %q above %s", repoModule, wd)
		}
	}
}

// binaries returns the directory holding etcd and kube-apiserver: the one
// in $KUBEGAP_TESTBIN_DIR, or the one hack/testbed-bin.sh prints after
// finding or building them.
func binaries(root string) (string, error) {
	dir := os.Getenv("KUBEGAP_TESTBIN_DIR")
	if dir == "" {
		script := filepath.Join(root, "hack", "testbed-bin.sh")
		cmd := exec.Command("bash", script)
		cmd.Stderr = os.Stderr
		out, err := cmd.Output()
		if err != nil {
			return "", fmt.Errorf("running %s (set KUBEGAP_TESTBIN_DIR to skip it): %w", script, err)
		}
		sc := bufio.NewScanner(bytes.NewReader(out))
		for sc.Scan() {
			if l := strings.TrimSpace(sc.Text()); l != "" {
				dir = l
			}
		}
		if dir == "" {
			return "", fmt.Errorf("%s printed no directory", script)
		}
	}
	for _, b := range []string{"etcd", "kube-apiserver", "kubectl"} {
		p := filepath.Join(dir, b)
		if st, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("test-bed binary: %w (run hack/testbed-bin.sh)", err)
		} else if st.Mode()&0o111 == 0 {
			return "", fmt.Errorf("test-bed binary %s is not executable", p)
		}
	}
	return dir, nil
}
