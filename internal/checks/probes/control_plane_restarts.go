package probes

import (
	_ "embed"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

const (
	cpRestartsID     = "control-plane-restarts"
	ruleCPRestarts   = "control-plane-restart-count"
	ruleEtcdLiveness = "etcd-liveness-probe"
	caseNRELabs      = "nre-labs-etcd-liveness-probe-restarts-2018"
	cpNamespace      = "kube-system"
	cpRestartsSource = "data/control-plane-restarts.yaml"
)

//go:embed data/control-plane-restarts.yaml
var cpRestartsData []byte

type cpRestartsFacts struct {
	Thresholds struct {
		Restarts int32 `json:"restarts"`
	} `json:"thresholds"`
	LivenessProbes []struct {
		ID           string   `json:"id"`
		ExecContains string   `json:"execContains"`
		Note         string   `json:"note"`
		Sources      []string `json:"sources"`
	} `json:"livenessProbes"`
}

var loadCPRestartsFacts = check.Facts(cpRestartsSource, cpRestartsData, func(f *cpRestartsFacts) error {
	if f.Thresholds.Restarts <= 0 {
		return fmt.Errorf("%s: thresholds.restarts must be positive", cpRestartsSource)
	}
	for _, p := range f.LivenessProbes {
		if p.ExecContains == "" {
			return fmt.Errorf("%s: %s: empty execContains", cpRestartsSource, p.ID)
		}
	}
	return nil
})

// controlPlaneRestartsCheck finds etcd and kube-apiserver containers of a
// self-managed control plane that keep restarting, and etcd static pods
// whose liveness probe has a record of killing a healthy etcd: a false
// liveness failure on the only etcd member is a control-plane outage.
func controlPlaneRestartsCheck() check.Check {
	return check.Check{
		ID:       cpRestartsID,
		Title:    "Control-plane static pods that keep restarting, or etcd with a liveness probe known to kill healthy members",
		Severity: finding.High,
		Description: "Reads the etcd and kube-apiserver pods in kube-system (label component, or the container image " +
			"name), as kubeadm runs them as static pods. control-plane-restart-count: a container restarted at least 20 " +
			"times (our threshold; node reboots and upgrades restart them too) is high when it is the only etcd member " +
			"or the only API server in the input, which then takes the control plane down on every restart, else medium. " +
			"etcd-liveness-probe: an etcd static pod whose liveness probe runs etcdctl, the probe kubeadm generated " +
			"before it moved to an HTTP /health check in 2019 (data/control-plane-restarts.yaml), is medium on a single " +
			"member and low with several. Why a probe failed (the kubelet's events and logs) is not judged. Managed " +
			"control planes (AKS, EKS, GKE) and external or embedded etcd run no such pods: nothing to judge there. " +
			"Snapshots written before kubegap kept static pods' probes show none.",
		Reads: check.Needs(snapshot.Pods),
		Rules: []check.Rule{
			{ID: ruleCPRestarts, Summary: "no etcd or kube-apiserver container in kube-system restarted 20 times or more",
				Needs: []snapshot.Resource{snapshot.Pods}},
			{ID: ruleEtcdLiveness, Summary: "no etcd static pod has an etcdctl exec liveness probe",
				Needs: []snapshot.Resource{snapshot.Pods}},
		},
		Cases: check.Prevents(caseNRELabs),
		Run:   runControlPlaneRestarts,
	}
}

// cpComponent names the control-plane component a kube-system pod runs,
// by kubeadm's component label, else by a container's image name.
func cpComponent(p *snapshot.Pod) string {
	switch c := p.Labels["component"]; c {
	case "etcd", "kube-apiserver":
		return c
	}
	for _, c := range p.Spec.Containers {
		switch n := check.ImageName(c.Image); n {
		case "etcd", "kube-apiserver":
			return n
		}
	}
	return ""
}

func runControlPlaneRestarts(ctx *check.Context) ([]finding.Finding, error) {
	facts, err := loadCPRestartsFacts()
	if err != nil {
		return nil, err
	}
	byComponent := map[string][]*snapshot.Pod{}
	for _, p := range ctx.Snapshot.Index().PodsInNamespace(cpNamespace) {
		if c := cpComponent(p); c != "" {
			byComponent[c] = append(byComponent[c], p)
		}
	}
	complete := ctx.CompleteIn(snapshot.Pods, cpNamespace)
	if !complete {
		why := "the kube-system pods in the input may not be all of them: restarts and probes of the ones missing are unknown"
		ctx.Incomplete(ruleCPRestarts, "%s", why)
		ctx.Incomplete(ruleEtcdLiveness, "%s", why)
	}
	var out []finding.Finding
	for _, comp := range []string{"etcd", "kube-apiserver"} {
		pods := byComponent[comp]
		single := complete && len(pods) == 1
		for _, p := range pods {
			if f, ok := restartFinding(p, comp, single, facts.Thresholds.Restarts); ok {
				out = append(out, f)
			}
		}
	}
	etcdSingle := complete && len(byComponent["etcd"]) == 1
	var probeless []string
	for _, p := range byComponent["etcd"] {
		if f, ok := etcdProbeFinding(facts, p, etcdSingle); ok {
			out = append(out, f)
		}
		if snapshot.IsControlPlaneStaticPod(p.Namespace, p.Annotations) && !hasLivenessProbe(p) {
			probeless = append(probeless, p.Name)
		}
	}
	// A live read shows every probe, so there no probe means none. A
	// snapshot written by a kubegap that did not keep static pods' probes
	// looks the same, so from a file it is unknown, not "no etcdctl probe".
	if len(probeless) > 0 && ctx.Snapshot.Source.Type != snapshot.SourceCluster {
		ctx.Incomplete(ruleEtcdLiveness, "etcd static pods %s show no liveness probe in the input: snapshots from "+
			"kubegap before static pods' probes were kept drop them; take a new snapshot to judge them",
			check.ListText(probeless, 5))
	}
	return out, nil
}

// hasLivenessProbe reports whether any container of p has one.
func hasLivenessProbe(p *snapshot.Pod) bool {
	for _, c := range p.Spec.Containers {
		if c.LivenessProbe != nil {
			return true
		}
	}
	return false
}

func podObjects(p *snapshot.Pod) []finding.ObjectRef {
	refs := []finding.ObjectRef{{APIVersion: "v1", Kind: "Pod", Namespace: p.Namespace, Name: p.Name}}
	if p.Spec.NodeName != "" {
		refs = append(refs, check.NodeRef(p.Spec.NodeName))
	}
	return refs
}

func restartFinding(p *snapshot.Pod, comp string, single bool, threshold int32) (finding.Finding, bool) {
	var worst *snapshot.ContainerStatus
	for i := range p.Status.ContainerStatuses {
		cs := &p.Status.ContainerStatuses[i]
		if cs.RestartCount >= threshold && (worst == nil || cs.RestartCount > worst.RestartCount) {
			worst = cs
		}
	}
	if worst == nil {
		return finding.Finding{}, false
	}
	sev, scope := finding.Medium, "one of several "+comp+" pods in kube-system"
	if single {
		sev, scope = finding.High, "the only "+comp+" pod in kube-system: each restart takes the control plane down"
	}
	podRef := finding.ObjectRef{APIVersion: "v1", Kind: "Pod", Namespace: p.Namespace, Name: p.Name}
	status := "status.containerStatuses[name=" + worst.Name + "]."
	fields := []finding.Field{finding.Value(status+"restartCount", worst.RestartCount)}
	if t := worst.LastTerminationState.Terminated; t != nil {
		fields = append(fields, finding.Value(status+"lastState.terminated.reason", t.Reason),
			finding.Value(status+"lastState.terminated.exitCode", t.ExitCode))
		// A termination without finishedAt is not "finished at year 1".
		if !t.FinishedAt.IsZero() {
			fields = append(fields, finding.Value(status+"lastState.terminated.finishedAt", t.FinishedAt.UTC().Format(time.RFC3339)))
		}
	}
	items := []finding.EvidenceItem{finding.Quote(podRef, fields...)}
	var ev []string
	if pr := livenessOf(p, worst.Name); pr != nil {
		items = append(items, finding.Quote(podRef, probeFields(worst.Name, pr)...))
		ev = append(ev, fmt.Sprintf("container %s liveness probe: %s", worst.Name, probeKind(pr)))
	}
	f := finding.Finding{
		Check:    cpRestartsID,
		Severity: sev,
		Title:    fmt.Sprintf("%s pod %s has restarted %d times", comp, p.Name, worst.RestartCount),
		Message: fmt.Sprintf("Container %s of %s/%s has restarted %d times; it is %s. Repeated restarts of a control-plane "+
			"container are an outage that repeats: find why it exits (its liveness probe, memory, certificates, disk latency) "+
			"before it is rebuilt.", worst.Name, p.Namespace, p.Name, worst.RestartCount, scope),
		Objects: podObjects(p),
		Remediation: "Read the previous container's logs (kubectl logs --previous) and the kubelet's events for the pod " +
			"(Unhealthy, Killing) before changing anything; keep the evidence before a rebuild. If the liveness probe kills " +
			"a working member, make it tolerant (an HTTP /health or /livez probe on localhost, a longer timeout) in the " +
			"static pod manifest; alert on control-plane restart counts; run three etcd members where the outage matters.",
		Cases: []string{caseNRELabs},
	}
	f.AddEvidence(items...)
	f.Evidence = append(f.Evidence, ev...)
	return f, true
}

func etcdProbeFinding(facts *cpRestartsFacts, p *snapshot.Pod, single bool) (finding.Finding, bool) {
	if !snapshot.IsControlPlaneStaticPod(p.Namespace, p.Annotations) {
		return finding.Finding{}, false
	}
	for _, c := range p.Spec.Containers {
		pr := c.LivenessProbe
		if pr == nil || pr.Exec == nil {
			continue
		}
		for _, known := range facts.LivenessProbes {
			if !execRuns(pr.Exec.Command, known.ExecContains) {
				continue
			}
			sev, scope := finding.Low, "etcd has several members here, so one false failure restarts one of them"
			if single {
				sev, scope = finding.Medium, "this is the only etcd member, so a false failure stops the whole control plane"
			}
			f := finding.Finding{
				Check:    cpRestartsID,
				Severity: sev,
				Title:    fmt.Sprintf("etcd static pod %s checks liveness by running %s", p.Name, known.ExecContains),
				Message: fmt.Sprintf("Container %s of %s/%s has an exec liveness probe that runs %s; %s. %s", c.Name, p.Namespace, p.Name,
					known.ExecContains, scope, strings.TrimSpace(known.Note)),
				Objects: podObjects(p),
				Remediation: "Regenerate the etcd static pod manifest with a current kubeadm (kubeadm upgrade), or replace the " +
					"probe by hand with an HTTP GET of etcd's /health (or /livez on etcd 3.5.11+) on the localhost metrics port " +
					"(--listen-metrics-urls), keeping a generous timeout and failure threshold.",
				Cases: []string{caseNRELabs},
			}
			// The probe is quoted by its settings, never its command
			// line, which can carry credentials; what it runs is text.
			fields := []finding.Field{finding.Value("metadata.annotations[kubernetes.io/config.mirror]", p.Annotations["kubernetes.io/config.mirror"]),
				finding.Value(check.ContainerField("Pod", "", c.Name, "image"), c.Image)}
			f.AddEvidence(finding.Quote(podObjects(p)[0], append(fields, probeFields(c.Name, pr)...)...))
			f.Evidence = append(f.Evidence, fmt.Sprintf("container %s liveness probe: %s", c.Name, probeKind(pr)),
				fmt.Sprintf("known probe %s: %s", known.ID, strings.Join(known.Sources, ", ")))
			return f, true
		}
	}
	return finding.Finding{}, false
}

// execRuns reports whether an exec command runs the named program: as a
// word of any argument, since kubeadm wraps it in /bin/sh -ec "...".
func execRuns(cmd []string, program string) bool {
	for _, arg := range cmd {
		for _, word := range strings.Fields(arg) {
			if word == program || strings.HasSuffix(word, "/"+program) {
				return true
			}
		}
	}
	return false
}

func livenessOf(p *snapshot.Pod, container string) *corev1.Probe {
	for _, c := range p.Spec.Containers {
		if c.Name == container {
			return c.LivenessProbe
		}
	}
	return nil
}

// probeKind names a probe's handler: for exec, the known programs it
// runs, never its full command line.
func probeKind(p *corev1.Probe) string {
	switch {
	case p.Exec != nil:
		var progs []string
		for _, prog := range []string{"etcdctl", "curl", "wget"} {
			if execRuns(p.Exec.Command, prog) {
				progs = append(progs, prog)
			}
		}
		sort.Strings(progs)
		if len(progs) > 0 {
			return "exec running " + strings.Join(progs, ", ")
		}
		return "exec"
	case p.HTTPGet != nil:
		return "httpGet"
	case p.TCPSocket != nil:
		return "tcpSocket"
	case p.GRPC != nil:
		return "grpc"
	}
	return "unknown handler"
}

// probeFields quotes a container's liveness probe: its endpoint (never
// an exec command) and its timing. A timing field the object does not
// set reads 0 in the typed probe and is quoted absent: the API server
// defaults it (1s timeout, 10s period, 3 failures), which 0 is not.
func probeFields(container string, p *corev1.Probe) []finding.Field {
	path := check.ContainerField("Pod", "", container, "livenessProbe.")
	var out []finding.Field
	switch {
	case p.HTTPGet != nil:
		out = append(out, finding.Value(path+"httpGet.path", p.HTTPGet.Path), finding.Value(path+"httpGet.port", p.HTTPGet.Port.String()))
	case p.TCPSocket != nil:
		out = append(out, finding.Value(path+"tcpSocket.port", p.TCPSocket.Port.String()))
	case p.GRPC != nil:
		out = append(out, finding.Value(path+"grpc.port", p.GRPC.Port))
	}
	for _, t := range []struct {
		name  string
		value int32
	}{{"timeoutSeconds", p.TimeoutSeconds}, {"periodSeconds", p.PeriodSeconds}, {"failureThreshold", p.FailureThreshold}} {
		if t.value == 0 {
			out = append(out, finding.Absent(path+t.name))
		} else {
			out = append(out, finding.Value(path+t.name, t.value))
		}
	}
	return out
}
