package runtime

import (
	_ "embed"
	"fmt"
	"path"
	"sort"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

const (
	caseDockerSock    = "aks-119-containerd-switch-breaks-docker-sock-mounts-2021"
	ruleSocketPods    = "socket-pods-on-non-docker-nodes"
	ruleSocketTmpl    = "socket-templates-target-non-docker-nodes"
	dockerSocketID    = "docker-socket-coupling"
	maxSocketEvidence = 10
)

//go:embed data/docker-socket-coupling.yaml
var dockerSocketData []byte

type socketFacts struct {
	Sockets []struct {
		Name    string   `json:"name"`
		Paths   []string `json:"paths"`
		Runtime string   `json:"runtime"`
		Sources []string `json:"sources"`
	} `json:"sockets"`

	// names maps a socket's file name to what it belongs to.
	names map[string]string
}

var loadSocketFacts = check.Facts("data/docker-socket-coupling.yaml", dockerSocketData, func(f *socketFacts) error {
	f.names = map[string]string{}
	for _, s := range f.Sockets {
		f.names[s.Name] = s.Runtime
	}
	return nil
})

// socketOf returns the socket a hostPath points at ("docker.sock"), or "".
func socketOf(p string, names map[string]string) string {
	p = path.Clean(p)
	dir, file := path.Split(p)
	if dir != "/var/run/" && dir != "/run/" {
		return ""
	}
	if _, ok := names[file]; ok {
		return file
	}
	return ""
}

// dockerSocketCouplingCheck finds workloads that mount Docker's socket, or
// dockershim's, from nodes whose kubelet runs containerd or CRI-O. There
// the socket is missing (a hostPath of type Socket then fails its check and
// the pod never starts, as on AKS 1.19) or belongs to a dockerd the kubelet
// does not use, whose containers escape its accounting.
func dockerSocketCouplingCheck() check.Check {
	return check.Check{
		ID:       dockerSocketID,
		Title:    "Workloads mount the Docker or dockershim socket on nodes that run containerd or CRI-O",
		Severity: finding.High,
		Description: "Looks for hostPath volumes of docker.sock or dockershim.sock (under /var/run or /run) in pods and in " +
			"the pod templates of DaemonSets, Deployments, StatefulSets, Jobs and CronJobs, and compares them with each " +
			"node's status.nodeInfo.containerRuntimeVersion. On a containerd:// or cri-o:// node there is no Docker daemon " +
			"behind the kubelet: the socket is absent (a hostPath of type Socket then fails and the pod stays in " +
			"ContainerCreating) or belongs to a separate dockerd whose containers the kubelet neither sees nor limits. " +
			"High: such pods exist on those nodes and are not running, or a DaemonSet or workload with a type-Socket mount " +
			"targets them; medium: the pods run there (a dockerd is present beside the runtime) or the workload could be " +
			"scheduled there; low: every node runs Docker today, so the coupling breaks at the next runtime change or at " +
			"Kubernetes 1.24, which removed dockershim (a pod no template in the input stands for, such as an Argo " +
			"workflow's, is judged on its own spec). Targeting reads nodeSelector and required node affinity, not " +
			"taints. Whether a node image also runs a dockerd is not visible through the API.",
		Reads: check.Needs(snapshot.Nodes, snapshot.Pods, snapshot.DaemonSets, snapshot.Deployments,
			snapshot.StatefulSets, snapshot.Jobs, snapshot.CronJobs),
		Rules: []check.Rule{
			{ID: ruleSocketPods, Summary: "no pod with a Docker or dockershim socket mount runs on a containerd or CRI-O node",
				Needs: []snapshot.Resource{snapshot.Nodes, snapshot.Pods}},
			{ID: ruleSocketTmpl, Summary: "no workload template with a Docker or dockershim socket mount targets a containerd or CRI-O node",
				Needs: []snapshot.Resource{snapshot.Nodes, snapshot.DaemonSets, snapshot.Deployments,
					snapshot.StatefulSets, snapshot.Jobs, snapshot.CronJobs}},
		},
		Cases: check.Prevents(caseDockerSock),
		Run:   runDockerSocketCoupling,
	}
}

// socketWorkload is one workload (or bare pod) that mounts a socket.
type socketWorkload struct {
	ref        finding.ObjectRef
	spec       *corev1.PodSpec        // nil for a bare pod
	items      []finding.EvidenceItem // the socket volumes as the objects write them
	typeSocket bool
	daemon     bool
	// bare is a pod with no template in the input, on a Docker-only cluster.
	bare bool
	// pods of it seen on non-Docker nodes, split by whether they run.
	stuck, running []string
	stuckNodes     map[string]bool
	runningNodes   map[string]bool
}

func runDockerSocketCoupling(ctx *check.Context) ([]finding.Finding, error) {
	s := ctx.Snapshot
	facts, err := loadSocketFacts()
	if err != nil {
		return nil, err
	}
	names := facts.names
	if len(s.Nodes) == 0 {
		return nil, check.NotEvaluated("the input holds no nodes to compare runtimes with")
	}
	runtimes := map[string]string{} // node -> runtime name
	var nonDocker, docker, unknown int
	for i := range s.Nodes {
		rt, ok := runtimeOf(&s.Nodes[i])
		switch {
		case !ok:
			unknown++
		case rt.Name == "docker":
			docker++
			runtimes[s.Nodes[i].Name] = rt.Name
		default:
			nonDocker++
			runtimes[s.Nodes[i].Name] = rt.Name
		}
	}
	if unknown > 0 {
		msg := fmt.Sprintf("%s report no containerRuntimeVersion", check.Plural(unknown, "node", "nodes"))
		ctx.Incomplete(ruleSocketPods, "%s", msg)
		ctx.Incomplete(ruleSocketTmpl, "%s", msg)
	}

	work := map[string]*socketWorkload{}
	var order []string
	add := func(ref finding.ObjectRef, spec *corev1.PodSpec, daemon bool) {
		var items []finding.EvidenceItem
		typeSocket := false
		for _, v := range spec.Volumes {
			if v.HostPath == nil {
				continue
			}
			if sock := socketOf(v.HostPath.Path, names); sock != "" {
				t := "unset"
				if v.HostPath.Type != nil && *v.HostPath.Type != "" {
					t = string(*v.HostPath.Type)
				}
				typeSocket = typeSocket || t == string(corev1.HostPathSocket)
				vol := check.PodSpecPath(ref.Kind) + ".volumes[name=" + v.Name + "].hostPath."
				typeField := finding.Absent(vol + "type")
				if v.HostPath.Type != nil {
					typeField = finding.Value(vol+"type", string(*v.HostPath.Type))
				}
				items = append(items, finding.Quote(ref, finding.Value(vol+"path", v.HostPath.Path), typeField))
			}
		}
		if len(items) == 0 {
			return
		}
		key := ref.String()
		work[key] = &socketWorkload{ref: ref, spec: spec, items: items, typeSocket: typeSocket, daemon: daemon,
			stuckNodes: map[string]bool{}, runningNodes: map[string]bool{}}
		order = append(order, key)
	}
	for i := range s.DaemonSets {
		d := &s.DaemonSets[i]
		add(check.Ref("apps/v1", "DaemonSet", d), &d.Spec.Template.Spec, true)
	}
	for i := range s.Deployments {
		d := &s.Deployments[i]
		add(check.Ref("apps/v1", "Deployment", d), &d.Spec.Template.Spec, false)
	}
	for i := range s.StatefulSets {
		d := &s.StatefulSets[i]
		add(check.Ref("apps/v1", "StatefulSet", d), &d.Spec.Template.Spec, false)
	}
	for i := range s.Jobs {
		d := &s.Jobs[i]
		if len(d.OwnerReferences) > 0 && d.OwnerReferences[0].Kind == "CronJob" {
			continue // judged through its CronJob
		}
		add(check.Ref("batch/v1", "Job", d), &d.Spec.Template.Spec, false)
	}
	for i := range s.CronJobs {
		d := &s.CronJobs[i]
		add(check.Ref("batch/v1", "CronJob", d), &d.Spec.JobTemplate.Spec.Template.Spec, false)
	}

	ix := s.Index()
	// onDocker holds the socket-mounting pods on Docker nodes: a pod no
	// template in the input stands for (an Argo workflow's pod, owned by
	// its Workflow) is judged on its own spec, so its coupling shows while
	// every node still runs Docker, before a runtime change breaks it.
	var onDocker []*snapshot.Pod
	for i := range s.Pods {
		p := &s.Pods[i]
		found := false
		var sockItem finding.EvidenceItem
		for _, v := range p.Spec.Volumes {
			if socketOf(v.Path, names) != "" {
				found = true
				sockItem = finding.Quote(finding.ObjectRef{APIVersion: "v1", Kind: "Pod", Namespace: p.Namespace, Name: p.Name},
					finding.Value("spec.volumes[name="+v.Name+"].hostPath.path", v.Path))
				break
			}
		}
		if !found {
			continue
		}
		rt := runtimes[p.Spec.NodeName]
		if rt == "docker" && p.Spec.NodeName != "" {
			onDocker = append(onDocker, p)
		}
		if p.Spec.NodeName == "" || rt == "" || rt == "docker" {
			continue
		}
		key := ownerKey(p, ix)
		w := work[key]
		if w == nil {
			ref := finding.ObjectRef{APIVersion: "v1", Kind: "Pod", Namespace: p.Namespace, Name: p.Name}
			if key != ref.String() {
				// The owner is not in the input: report the pods under it.
				ref = ownerRef(p, ix)
			}
			w = &socketWorkload{ref: ref, items: []finding.EvidenceItem{sockItem},
				stuckNodes: map[string]bool{}, runningNodes: map[string]bool{}}
			work[key] = w
			order = append(order, key)
		}
		podText := fmt.Sprintf("Pod %s/%s on Node %s (%s, phase %s)", p.Namespace, p.Name, p.Spec.NodeName, rt, p.Status.Phase)
		if p.Status.Phase == corev1.PodRunning {
			w.running = append(w.running, podText)
			w.runningNodes[p.Spec.NodeName] = true
		} else if p.Status.Phase == corev1.PodPending {
			w.stuck = append(w.stuck, podText)
			w.stuckNodes[p.Spec.NodeName] = true
		}
	}

	for _, p := range onDocker {
		ref := finding.ObjectRef{APIVersion: "v1", Kind: "Pod", Namespace: p.Namespace, Name: p.Name}
		key := ownerKey(p, ix)
		if nonDocker > 0 || key != ref.String() || work[key] != nil {
			continue // judged through its template, or not only-Docker
		}
		w := &socketWorkload{ref: ref, bare: true, stuckNodes: map[string]bool{}, runningNodes: map[string]bool{}}
		for _, v := range p.Spec.Volumes {
			if socketOf(v.Path, names) == "" {
				continue
			}
			vol := "spec.volumes[name=" + v.Name + "].hostPath."
			typeField := finding.Absent(vol + "type")
			if v.Type != nil {
				typeField = finding.Value(vol+"type", string(*v.Type))
			}
			w.items = append(w.items, finding.Quote(ref, finding.Value(vol+"path", v.Path), typeField))
		}
		work[key] = w
		order = append(order, key)
	}

	var out []finding.Finding
	for _, key := range order {
		w := work[key]
		if f, ok := socketFinding(w, s, runtimes, nonDocker, docker); ok {
			out = append(out, f)
		}
	}
	return out, nil
}

// ownerKey is the key of the workload a pod belongs to: its Deployment
// through its ReplicaSet, its other controller, or the pod itself.
func ownerKey(p *snapshot.Pod, ix *snapshot.Index) string { return ownerRef(p, ix).String() }

func ownerRef(p *snapshot.Pod, ix *snapshot.Index) finding.ObjectRef {
	for _, o := range p.OwnerReferences {
		if o.Controller == nil || !*o.Controller {
			continue
		}
		switch o.Kind {
		case "ReplicaSet":
			if rs := ix.ReplicaSet(o.UID); rs != nil {
				for _, ro := range rs.OwnerReferences {
					if ro.Kind == "Deployment" {
						return finding.ObjectRef{APIVersion: "apps/v1", Kind: "Deployment", Namespace: p.Namespace, Name: ro.Name}
					}
				}
			}
			return finding.ObjectRef{APIVersion: "apps/v1", Kind: "ReplicaSet", Namespace: p.Namespace, Name: o.Name}
		case "DaemonSet", "StatefulSet":
			return finding.ObjectRef{APIVersion: "apps/v1", Kind: o.Kind, Namespace: p.Namespace, Name: o.Name}
		case "Job":
			return finding.ObjectRef{APIVersion: "batch/v1", Kind: "Job", Namespace: p.Namespace, Name: o.Name}
		}
	}
	return finding.ObjectRef{APIVersion: "v1", Kind: "Pod", Namespace: p.Namespace, Name: p.Name}
}

func socketFinding(w *socketWorkload, s *snapshot.Snapshot, runtimes map[string]string, nonDocker, docker int) (finding.Finding, bool) {
	f := finding.Finding{Check: dockerSocketID, Objects: []finding.ObjectRef{w.ref}, Cases: []string{caseDockerSock}}
	// The socket volumes, quoted from the objects.
	f.AddEvidence(w.items...)
	var targeted []string
	if w.spec != nil && w.daemon && len(w.stuck)+len(w.running) == 0 {
		for i := range s.Nodes {
			n := &s.Nodes[i]
			if rt := runtimes[n.Name]; rt != "" && rt != "docker" && targets(w.spec, n) {
				targeted = append(targeted, n.Name)
			}
		}
	}
	nodes := func(set map[string]bool) []string {
		out := make([]string, 0, len(set))
		for n := range set {
			out = append(out, n)
		}
		sort.Strings(out)
		return out
	}
	addPods := func(pods []string) {
		for i, p := range pods {
			if i == maxSocketEvidence {
				f.Evidence = append(f.Evidence, fmt.Sprintf("… and %d more pods", len(pods)-i))
				return
			}
			f.Evidence = append(f.Evidence, p)
		}
	}
	addNodes := func(ns []string) {
		for i, n := range ns {
			if i == check.MaxListedObjects {
				break
			}
			f.Objects = append(f.Objects, check.NodeRef(n))
		}
	}
	what := w.ref.Kind + " " + w.ref.Namespace + "/" + w.ref.Name
	switch {
	case len(w.stuck) > 0:
		ns := nodes(w.stuckNodes)
		f.Severity = finding.High
		f.Title = fmt.Sprintf("%s mounts the Docker socket and has pods not running on %s without Docker", what, check.Plural(len(ns), "node", "nodes"))
		f.Message = fmt.Sprintf("%s mounts a Docker or dockershim socket from the host, and %s of it sit on nodes whose kubelet runs "+
			"containerd or CRI-O and are not running. There the socket does not exist unless a separate dockerd was installed: "+
			"a hostPath of type Socket fails its check and the pod never starts, as Argo and Kubeflow pods did when AKS 1.19 "+
			"moved nodes to containerd.", what, check.Plural(len(w.stuck), "pod", "pods"))
		addPods(w.stuck)
		addNodes(ns)
	case len(targeted) > 0 && w.typeSocket:
		f.Severity = finding.High
		f.Title = fmt.Sprintf("DaemonSet %s/%s needs the Docker socket on %s without Docker", w.ref.Namespace, w.ref.Name, check.Plural(len(targeted), "node", "nodes"))
		f.Message = fmt.Sprintf("DaemonSet %s/%s mounts a Docker or dockershim socket with hostPath type Socket and targets %s "+
			"whose kubelet runs containerd or CRI-O. Unless those node images also run a dockerd, its pods there fail the "+
			"socket check and never start.", w.ref.Namespace, w.ref.Name, check.Plural(len(targeted), "node", "nodes"))
		f.Evidence = append(f.Evidence, fmt.Sprintf("targeted nodes without Docker: %s", check.ListText(targeted, maxSocketEvidence)))
		addNodes(targeted)
	case len(w.running) > 0 || len(targeted) > 0:
		ns := nodes(w.runningNodes)
		if len(ns) == 0 {
			ns = targeted
		}
		f.Severity = finding.Medium
		f.Title = fmt.Sprintf("%s talks to a Docker socket on %s whose kubelet does not use Docker", what, check.Plural(len(ns), "node", "nodes"))
		f.Message = fmt.Sprintf("%s mounts a Docker or dockershim socket on nodes whose kubelet runs containerd or CRI-O. Where its "+
			"pods run, something else provides the socket (a dockerd beside the runtime, or an empty path when the hostPath "+
			"type is unset): containers it starts through Docker are invisible to the kubelet and outside its resource "+
			"accounting, and Docker commands do not show the pods' containers.", what)
		addPods(w.running)
		if len(targeted) > 0 {
			f.Evidence = append(f.Evidence, fmt.Sprintf("targeted nodes without Docker: %s", check.ListText(targeted, maxSocketEvidence)))
		}
		addNodes(ns)
	case w.spec != nil && nonDocker > 0:
		f.Severity = finding.Medium
		f.Title = fmt.Sprintf("%s mounts the Docker socket in a cluster with %s without Docker", what, check.Plural(nonDocker, "node", "nodes"))
		f.Message = fmt.Sprintf("%s mounts a Docker or dockershim socket from the host, and %s of the cluster run containerd or "+
			"CRI-O. No pod of it is in the input on such a node, but wherever it lands there, the socket is missing or belongs "+
			"to a dockerd the kubelet does not use.", what, check.Plural(nonDocker, "node", "nodes"))
	case (w.spec != nil || w.bare) && docker > 0:
		f.Severity = finding.Low
		f.Title = fmt.Sprintf("%s depends on the nodes running Docker", what)
		f.Message = fmt.Sprintf("%s mounts a Docker or dockershim socket from the host. Every node with a known runtime runs Docker "+
			"today, so it works, but it breaks on the first node whose runtime changes: Kubernetes 1.24 removed dockershim, "+
			"and managed providers moved their node images to containerd with a minor upgrade.", what)
	default:
		return f, false
	}
	f.Evidence = append(f.Evidence, fmt.Sprintf("nodes by runtime: %d Docker, %d containerd or CRI-O", docker, nonDocker))
	f.Remediation = "Remove the dependency on the node's Docker daemon: switch the tool to a runtime-neutral mode (Argo's " +
		"emissary executor, a CRI socket through crictl, or kubelet APIs for metadata), build images with an in-cluster " +
		"builder instead of the host's dockerd, and drop the hostPath volume. Until then, keep the workload on nodes that run " +
		"Docker with a nodeSelector, and do not move those pools to another runtime."
	return f, true
}
