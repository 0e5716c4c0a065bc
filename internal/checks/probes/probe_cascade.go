package probes

import (
	"fmt"
	"net"
	"regexp"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// Rules of probe-cascade.
const (
	ruleSame       = "liveness-equals-readiness"
	ruleExecTime   = "exec-probe-timeout"
	ruleDependency = "liveness-checks-dependency"
)

// defaultProbeTimeout is the API default of Probe.timeoutSeconds (1 s, k8s.io/api
// core/v1 types.go, https://github.com/kubernetes/api/blob/master/core/v1/types.go);
// the kubelet enforces it on exec probes from Kubernetes 1.20
// (https://github.com/kubernetes/website/pull/24692).
const defaultProbeTimeout = 1

func probeCascadeCheck() check.Check {
	return check.Check{
		ID:       "probe-cascade",
		Title:    "Probes that restart healthy pods",
		Severity: finding.Medium,
		Description: "Reads the probes of Deployment, StatefulSet and DaemonSet templates. Medium: liveness probes that " +
			"check a dependency, a heuristic over what the spec shows: exec commands running a database or cache " +
			"client (mysql, mysqladmin, psql, pg_isready, redis-cli, mongo, mongosh, cqlsh) against a host other " +
			"than the pod itself, curl or wget to a URL on a host other than localhost, and httpGet probes with a host " +
			"set; when the dependency is slow every replica fails its liveness probe and is restarted at once. " +
			"Medium: exec liveness probes with timeoutSeconds unset or 1 (the API default), which the kubelet " +
			"enforces since Kubernetes 1.20 (low for readiness and startup probes, which do not restart). Low: " +
			"liveness and readiness probes that are the same handler, so whatever makes a pod unready also " +
			"restarts it, unless liveness waits longer (periodSeconds × failureThreshold) than readiness, the pattern " +
			"the Kubernetes docs recommend. A probe of an address the pod's own arguments make it listen on " +
			"(-localip, --listen*, --bind*) is a probe of the pod, not of a dependency. What an HTTP endpoint does inside the application is not visible: the check flags " +
			"risk, not proof. Pods keep no probes in kubegap's snapshot, so bare pods are not read.",
		Reads: []check.Input{{Resource: snapshot.Deployments}, {Resource: snapshot.StatefulSets}, {Resource: snapshot.DaemonSets}},
		Rules: []check.Rule{
			{ID: ruleDependency, Summary: "Liveness probes that call a database, cache or remote host (heuristic)",
				Needs: []snapshot.Resource{snapshot.Deployments, snapshot.StatefulSets, snapshot.DaemonSets}},
			{ID: ruleExecTime, Summary: "Exec probes with the 1-second default timeout, enforced since 1.20",
				Needs: []snapshot.Resource{snapshot.Deployments, snapshot.StatefulSets, snapshot.DaemonSets}},
			{ID: ruleSame, Summary: "Liveness probes identical to readiness probes",
				Needs: []snapshot.Resource{snapshot.Deployments, snapshot.StatefulSets, snapshot.DaemonSets}},
		},
		Cases: check.Prevents("mozilla-mdn-liveness-probe-mysql-cascade-2017", "k8s-120-exec-probe-timeout-enforced-2021"),
		Run:   runProbeCascade,
	}
}

// hit is one container's probe that a rule flags.
type hit struct {
	ref    finding.ObjectRef
	detail string
	sev    finding.Severity
	// fields are the probe fields the rule judged, their paths relative to
	// the container ("livenessProbe.exec.command"); item is them quoted
	// from the workload.
	fields []finding.Field
	item   finding.EvidenceItem
}

func runProbeCascade(ctx *check.Context) ([]finding.Finding, error) {
	s := ctx.Snapshot
	if len(s.Deployments)+len(s.StatefulSets)+len(s.DaemonSets) == 0 &&
		!ctx.Present(snapshot.Deployments) && !ctx.Present(snapshot.StatefulSets) && !ctx.Present(snapshot.DaemonSets) {
		return nil, check.NotEvaluated("the input has no Deployments, StatefulSets or DaemonSets")
	}
	hits := map[string][]hit{}
	visit := func(kind string, meta *metav1.ObjectMeta, spec *corev1.PodSpec) {
		// The pod's listen addresses (a regexp per argument) and the
		// workload's reference are worked out only for a workload with
		// a hit, most have none.
		var own map[string]bool
		ownOf := func() map[string]bool {
			if own == nil {
				own = ownAddresses(spec)
			}
			return own
		}
		var ref finding.ObjectRef
		for i := range spec.Containers {
			c := &spec.Containers[i]
			for rule, h := range judgeContainer(c, ownOf) {
				if ref.Kind == "" {
					ref = check.Ref("apps/v1", kind, meta)
				}
				h.ref = ref
				fields := make([]finding.Field, len(h.fields))
				for i, f := range h.fields {
					f.Path = check.ContainerField(ref.Kind, "", c.Name, f.Path)
					fields[i] = f
				}
				h.item = finding.Quote(ref, fields...)
				hits[rule] = append(hits[rule], h)
			}
		}
	}
	each(s, visit)
	var out []finding.Finding
	for _, r := range []struct {
		id, title, message, remediation, caseID string
	}{
		{ruleDependency, "liveness probes check a dependency",
			"A liveness probe that fails when a database, cache or remote service is slow restarts every replica at once, " +
				"turning a dependency's hiccup into an outage of this tier and a reconnect storm against the dependency.",
			"Make liveness probes check only the process itself (a local endpoint that does not call out); check dependencies in readiness probes at most.",
			"mozilla-mdn-liveness-probe-mysql-cascade-2017"},
		{ruleExecTime, "exec probes run with the 1-second default timeout",
			"Since Kubernetes 1.20 the kubelet fails an exec probe that runs longer than timeoutSeconds, 1 second unless " +
				"set. A probe command that is sometimes slower (a shell, a JVM tool, a client under load) fails, and a " +
				"failing liveness probe restarts the container.",
			"Measure the probe command and set timeoutSeconds well above its slow runs; prefer httpGet or tcpSocket probes.",
			"k8s-120-exec-probe-timeout-enforced-2021"},
		{ruleSame, "liveness probes identical to readiness probes",
			"When liveness and readiness run the same check, anything that makes a pod unready, including an overloaded " +
				"dependency the check touches, also gets it restarted, while readiness alone would have shed its traffic.",
			"Give liveness a cheaper, local check (or a higher failureThreshold) than readiness.",
			"mozilla-mdn-liveness-probe-mysql-cascade-2017"},
	} {
		hs := hits[r.id]
		if len(hs) == 0 {
			continue
		}
		sort.SliceStable(hs, func(a, b int) bool { return hs[a].ref.String() < hs[b].ref.String() })
		sev := finding.Info
		var objs []finding.ObjectRef
		seen := map[finding.ObjectRef]bool{}
		for _, h := range hs {
			sev = max(sev, h.sev)
			if !seen[h.ref] && len(objs) < check.MaxListedObjects {
				objs = append(objs, h.ref)
			}
			seen[h.ref] = true
		}
		f := finding.Finding{
			Check: "probe-cascade", Severity: sev,
			Title:       fmt.Sprintf("%s: %s", check.Plural(len(seen), "workload", "workloads"), r.title),
			Message:     r.message,
			Objects:     objs,
			Remediation: r.remediation,
			Cases:       []string{r.caseID},
		}
		// Each container's verdict in words, then the probe fields it
		// rests on, quoted.
		for i, h := range hs {
			if i == check.MaxEvidence {
				f.Evidence = append(f.Evidence, fmt.Sprintf("and %d more", len(hs)-check.MaxEvidence))
				break
			}
			f.Evidence = append(f.Evidence, fmt.Sprintf("%s: %s", h.ref, h.detail))
			f.AddEvidence(h.item)
		}
		out = append(out, f)
	}
	return out, nil
}

func each(s *snapshot.Snapshot, visit func(kind string, meta *metav1.ObjectMeta, spec *corev1.PodSpec)) {
	for i := range s.Deployments {
		visit("Deployment", &s.Deployments[i].ObjectMeta, &s.Deployments[i].Spec.Template.Spec)
	}
	for i := range s.StatefulSets {
		visit("StatefulSet", &s.StatefulSets[i].ObjectMeta, &s.StatefulSets[i].Spec.Template.Spec)
	}
	for i := range s.DaemonSets {
		visit("DaemonSet", &s.DaemonSets[i].ObjectMeta, &s.DaemonSets[i].Spec.Template.Spec)
	}
}

// judgeContainer returns, by rule, what is wrong with a container's probes,
// nil when nothing is. own gives the addresses the pod's containers are
// told to listen on, asked only for a probe to a host that is not local.
func judgeContainer(c *corev1.Container, own func() map[string]bool) map[string]hit {
	live, ready, startup := c.LivenessProbe, c.ReadinessProbe, c.StartupProbe
	if live == nil && ready == nil && startup == nil {
		return nil
	}
	var out map[string]hit // made on the first hit
	put := func(rule string, h hit) {
		if out == nil {
			out = map[string]hit{}
		}
		out[rule] = h
	}
	if live != nil {
		if dep, field := dependencyOf(live, own); dep != "" {
			put(ruleDependency, hit{detail: fmt.Sprintf("container %s liveness probe %s", c.Name, dep), sev: finding.Medium,
				fields: []finding.Field{field}})
		}
	}
	// The same endpoint with a longer liveness failure window is the
	// pattern the Kubernetes docs recommend: the pod is seen unready for a
	// while before it is killed, so unreadiness alone does not restart it
	// (https://kubernetes.io/docs/tasks/configure-pod-container/configure-liveness-readiness-startup-probes/).
	if live != nil && ready != nil && handlerSet(live) && failureWindow(live) <= failureWindow(ready) &&
		equality.Semantic.DeepEqual(live.ProbeHandler, ready.ProbeHandler) {
		fields := append(handlerFields("livenessProbe", live), windowFields("livenessProbe", live)...)
		fields = append(fields, handlerFields("readinessProbe", ready)...)
		fields = append(fields, windowFields("readinessProbe", ready)...)
		put(ruleSame, hit{detail: fmt.Sprintf("container %s liveness and readiness are both %s", c.Name, describe(live)), sev: finding.Low,
			fields: fields})
	}
	var short []string
	var fields []finding.Field
	sev := finding.Severity(-1)
	for _, p := range []struct {
		kind  string
		probe *corev1.Probe
		sev   finding.Severity
	}{{"liveness", live, finding.Medium}, {"readiness", ready, finding.Low}, {"startup", startup, finding.Low}} {
		if p.probe == nil || p.probe.Exec == nil || p.probe.TimeoutSeconds > defaultProbeTimeout {
			continue
		}
		t := "unset (1 s)"
		if p.probe.TimeoutSeconds != 0 {
			t = fmt.Sprintf("%d s", p.probe.TimeoutSeconds)
		}
		short = append(short, fmt.Sprintf("%s exec probe %q timeoutSeconds %s", p.kind, strings.Join(p.probe.Exec.Command, " "), t))
		fields = append(fields, finding.Value(p.kind+"Probe.exec.command", finding.JSONText(p.probe.Exec.Command)),
			positive(p.kind+"Probe.timeoutSeconds", p.probe.TimeoutSeconds))
		sev = max(sev, p.sev)
	}
	if len(short) > 0 {
		put(ruleExecTime, hit{detail: "container " + c.Name + ": " + strings.Join(short, "; "), sev: sev, fields: fields})
	}
	return out
}

// handlerFields quotes a probe's handler, paths under kind
// ("livenessProbe"): what describe says of it.
func handlerFields(kind string, p *corev1.Probe) []finding.Field {
	switch {
	case p.Exec != nil:
		return []finding.Field{finding.Value(kind+".exec.command", finding.JSONText(p.Exec.Command))}
	case p.HTTPGet != nil:
		fs := []finding.Field{finding.Value(kind+".httpGet.path", p.HTTPGet.Path), finding.Value(kind+".httpGet.port", p.HTTPGet.Port.String())}
		if p.HTTPGet.Host != "" {
			fs = append(fs, finding.Value(kind+".httpGet.host", p.HTTPGet.Host))
		}
		return fs
	case p.TCPSocket != nil:
		return []finding.Field{finding.Value(kind+".tcpSocket.port", p.TCPSocket.Port.String())}
	case p.GRPC != nil:
		return []finding.Field{finding.Value(kind+".grpc.port", p.GRPC.Port)}
	}
	return nil
}

// windowFields quotes what failureWindow reads: periodSeconds and
// failureThreshold, absent when unset (the API defaults 10 and 3 apply).
func windowFields(kind string, p *corev1.Probe) []finding.Field {
	return []finding.Field{positive(kind+".periodSeconds", p.PeriodSeconds), positive(kind+".failureThreshold", p.FailureThreshold)}
}

// positive is a field read at v, or absent when v is 0: the typed probe
// reads 0 for a field the object does not set.
func positive(path string, v int32) finding.Field {
	if v == 0 {
		return finding.Absent(path)
	}
	return finding.Value(path, v)
}

func handlerSet(p *corev1.Probe) bool {
	return p.Exec != nil || p.HTTPGet != nil || p.TCPSocket != nil || p.GRPC != nil
}

func describe(p *corev1.Probe) string {
	switch {
	case p.Exec != nil:
		return fmt.Sprintf("exec %q", strings.Join(p.Exec.Command, " "))
	case p.HTTPGet != nil:
		return fmt.Sprintf("httpGet %s port %s", p.HTTPGet.Path, p.HTTPGet.Port.String())
	case p.TCPSocket != nil:
		return "tcpSocket port " + p.TCPSocket.Port.String()
	case p.GRPC != nil:
		return fmt.Sprintf("grpc port %d", p.GRPC.Port)
	}
	return "no handler"
}

var (
	// dbClient finds database and cache clients in a probe command.
	dbClient = regexp.MustCompile(`(?:^|[\s/;&|'"])(mysql|mysqladmin|psql|pg_isready|redis-cli|mongo|mongosh|cqlsh)(?:\s|$|['"])`)
	// hostFlag finds a client's host argument: -h host, -hhost, --host=host, --host host.
	hostFlag = regexp.MustCompile(`(?:^|\s)(?:-h\s*|--host[=\s]+)([^\s'";]+)`)
	// fetcher finds curl and wget in a probe command.
	fetcher = regexp.MustCompile(`(?:^|[\s/;&|'"])(curl|wget)(?:\s|$)`)
	urlHost = regexp.MustCompile(`[a-z]+://([^/:\s'"]+|\[[^\]]+\])`)
)

// failureWindow is how long a probe fails before it acts, in seconds:
// periodSeconds × failureThreshold, with the API defaults 10 and 3.
func failureWindow(p *corev1.Probe) int32 {
	period, threshold := p.PeriodSeconds, p.FailureThreshold
	if period <= 0 {
		period = 10
	}
	if threshold <= 0 {
		threshold = 3
	}
	return period * threshold
}

// listenFlag finds the flags by which a server is told the addresses it
// listens on: -localip (NodeLocal DNSCache), --listen-address,
// --bind-address, --listen, --bind.
var listenFlag = regexp.MustCompile(`^--?(?:localip|listen|bind)[a-z-]*$`)

// ownAddresses are the addresses the pod's containers are told to listen
// on by their arguments. A probe to one of them is a probe of the pod
// itself: NodeLocal DNSCache probes 169.254.20.10, the address its
// -localip argument makes it bind on the node.
func ownAddresses(spec *corev1.PodSpec) map[string]bool {
	own := map[string]bool{}
	for _, c := range spec.Containers {
		args := append(append([]string{}, c.Command...), c.Args...)
		for i, a := range args {
			flag, val, inline := strings.Cut(a, "=")
			if !listenFlag.MatchString(flag) {
				continue
			}
			if !inline {
				if i+1 >= len(args) {
					continue
				}
				val = args[i+1]
			}
			for _, addr := range strings.Split(val, ",") {
				addr = strings.TrimSpace(addr)
				if h, _, err := net.SplitHostPort(addr); err == nil {
					addr = h
				}
				if addr != "" {
					own[strings.Trim(addr, "[]")] = true
				}
			}
		}
	}
	return own
}

// local reports whether a host names the pod itself.
func local(host string) bool {
	switch strings.Trim(host, "[]") {
	case "localhost", "127.0.0.1", "::1", "0.0.0.0", "":
		return true
	}
	// $(POD_IP), ${HOSTNAME}: the pod's own address, by convention.
	return strings.HasPrefix(host, "$")
}

// dependencyOf says which dependency a liveness probe calls, or "", and
// the probe field that says so (its path relative to the container).
func dependencyOf(p *corev1.Probe, own func() map[string]bool) (string, finding.Field) {
	self := func(host string) bool { return local(host) || own()[strings.Trim(host, "[]")] }
	if p.HTTPGet != nil && p.HTTPGet.Host != "" && !self(p.HTTPGet.Host) {
		return fmt.Sprintf("is an httpGet to host %s", p.HTTPGet.Host), finding.Value("livenessProbe.httpGet.host", p.HTTPGet.Host)
	}
	if p.Exec == nil {
		return "", finding.Field{}
	}
	cmd := strings.Join(p.Exec.Command, " ")
	field := finding.Value("livenessProbe.exec.command", finding.JSONText(p.Exec.Command))
	if m := dbClient.FindStringSubmatch(cmd); m != nil {
		if h := hostFlag.FindStringSubmatch(cmd); h != nil && !self(h[1]) {
			return fmt.Sprintf("runs %s against host %s: %q", m[1], h[1], cmd), field
		}
	}
	if m := fetcher.FindStringSubmatch(cmd); m != nil {
		for _, u := range urlHost.FindAllStringSubmatch(cmd, -1) {
			if !self(u[1]) {
				return fmt.Sprintf("runs %s against %s: %q", m[1], u[1], cmd), field
			}
		}
	}
	return "", finding.Field{}
}
