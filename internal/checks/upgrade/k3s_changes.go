package upgrade

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// Rules of what a k3s release changes beside Kubernetes itself: flannel
// backends it refuses at start-up, and the major version of the Traefik it
// bundles.
const (
	ruleK3sFlannelBackend = "k3s-flannel-backend"
	ruleK3sTraefikMajor   = "k3s-bundled-traefik-major"

	annotationFlannelBackendType = "flannel.alpha.coreos.com/backend-type"
	annotationK3sNodeArgs        = snapshot.AnnotationK3sNodeArgs
)

// k3sFacts is upgrade-facts.yaml's k3s section.
type k3sFacts struct {
	RemovedFlannelBackends []removedFlannelBackend `json:"removedFlannelBackends"`
	BundledTraefik         bundledTraefik          `json:"bundledTraefik"`
}

// removedFlannelBackend is a --flannel-backend value a k3s minor refuses
// at start-up, and the type flannel records for it on each node.
type removedFlannelBackend struct {
	Backend     string   `json:"backend"`
	BackendType string   `json:"backendType"`
	FatalFrom   string   `json:"fatalFrom"`
	Replacement string   `json:"replacement"`
	Case        string   `json:"case"`
	Sources     []string `json:"sources"`

	fatalFrom check.KubeVersion
}

// bundledTraefik is the k3s release from which the packaged Traefik is of
// a new major version, and the image k3s runs it from.
type bundledTraefik struct {
	From    string   `json:"from"`
	Major   int      `json:"major"`
	Image   string   `json:"image"`
	Case    string   `json:"case"`
	Sources []string `json:"sources"`

	from check.KubeVersion
}

func parseK3sFacts(f *facts) error {
	for i := range f.K3s.RemovedFlannelBackends {
		b := &f.K3s.RemovedFlannelBackends[i]
		v, ok := check.ParseKubeVersion(b.FatalFrom)
		if !ok || b.Backend == "" || b.BackendType == "" || b.Replacement == "" || b.Case == "" {
			return fmt.Errorf("upgrade-facts.yaml: k3s.removedFlannelBackends %q: backend, backendType, fatalFrom, replacement and case are required", b.Backend)
		}
		if err := sourced("upgrade-facts.yaml", "k3s flannel backend "+b.Backend, b.Sources); err != nil {
			return err
		}
		b.fatalFrom = v
	}
	t := &f.K3s.BundledTraefik
	if t.From == "" && t.Image == "" {
		return nil // no row: the rule judges nothing
	}
	v, ok := check.ParseKubeVersion(t.From)
	if !ok || t.Major == 0 || t.Image == "" || t.Case == "" {
		return fmt.Errorf("upgrade-facts.yaml: k3s.bundledTraefik: from, major, image and case are required")
	}
	if err := sourced("upgrade-facts.yaml", "k3s.bundledTraefik", t.Sources); err != nil {
		return err
	}
	t.from = v
	return nil
}

// isK3sNode reports whether the node's kubelet is k3s's ("v1.31.5+k3s1").
func isK3sNode(n *corev1.Node) bool {
	return strings.Contains(n.Status.NodeInfo.KubeletVersion, "+k3s")
}

// flannelBackendArg returns the --flannel-backend value a k3s.io/node-args
// annotation names (k3s writes each "--flag=value" as two elements), and
// whether the annotation could be read.
func flannelBackendArg(nodeArgs string) (string, bool) {
	var args []string
	if json.Unmarshal([]byte(nodeArgs), &args) != nil {
		return "", false
	}
	for i, a := range args {
		if a == "--flannel-backend" && i+1 < len(args) {
			// "wireguard=opt1=v1" passes options after the backend.
			name, _, _ := strings.Cut(args[i+1], "=")
			return name, true
		}
	}
	return "", true
}

// k3sFlannelBackend finds k3s nodes still below the minor that refuses
// their flannel backend, when the target is at or past it: the k3s server
// on the target exits at start with a fatal error, and nodes moved to the
// replacement one at a time cannot reach those still on the old one.
func k3sFlannelBackend(ctx *check.Context, f *facts, t check.KubeVersion) []finding.Finding {
	s := ctx.Snapshot
	var out []finding.Finding
	var unknown int
	var newest check.KubeVersion // the last minor that refuses a backend, up to the target
	for _, b := range f.K3s.RemovedFlannelBackends {
		if t.Less(b.fatalFrom) {
			continue
		}
		if newest.Less(b.fatalFrom) {
			newest = b.fatalFrom
		}
		var named, typed []*corev1.Node // by node-args, by the backend-type annotation only
		for i := range s.Nodes {
			n := &s.Nodes[i]
			if !isK3sNode(n) || !belowTarget(n, b.fatalFrom) {
				continue
			}
			args, hasArgs := n.Annotations[annotationK3sNodeArgs]
			backendType, hasType := n.Annotations[annotationFlannelBackendType]
			arg, argsRead := flannelBackendArg(args)
			switch {
			case hasArgs && argsRead && arg == b.Backend:
				named = append(named, n)
			case hasType && backendType == b.BackendType:
				typed = append(typed, n)
			}
		}
		if fd, ok := flannelFinding(b, t, named, typed); ok {
			out = append(out, fd)
		}
	}
	for i := range s.Nodes {
		n := &s.Nodes[i]
		// A node at or past that minor already runs without the removed
		// backends (its k3s would not have started with one).
		if newest == (check.KubeVersion{}) || !isK3sNode(n) || !belowTarget(n, newest) {
			continue
		}
		_, hasType := n.Annotations[annotationFlannelBackendType]
		_, argsRead := flannelBackendArg(n.Annotations[annotationK3sNodeArgs])
		if !hasType && !argsRead {
			unknown++
		}
	}
	if unknown > 0 {
		ctx.Incomplete(ruleK3sFlannelBackend, "%s carry neither the %s nor the %s annotation: their flannel backend is not known",
			check.Plural(unknown, "k3s node", "k3s nodes"), annotationFlannelBackendType, annotationK3sNodeArgs)
	}
	return out
}

func flannelFinding(b removedFlannelBackend, t check.KubeVersion, named, typed []*corev1.Node) (finding.Finding, bool) {
	nodes := append(append([]*corev1.Node{}, named...), typed...)
	if len(nodes) == 0 {
		return finding.Finding{}, false
	}
	refs, more := check.NodeRefs(nodes)
	sev, how := finding.High, fmt.Sprintf("k3s.io/node-args names --flannel-backend %s", b.Backend)
	if len(named) == 0 {
		// flannel's extension type is what k3s's wireguard backend used,
		// but a custom --flannel-conf can choose it too.
		sev = finding.Medium
		how = fmt.Sprintf("flannel records backend type %s, which k3s's %s backend uses; no k3s.io/node-args in the input names the backend", b.BackendType, b.Backend)
	}
	fd := finding.Finding{
		Check: "upgrade-preflight", Severity: sev, Preflight: finding.PreflightBefore,
		Title: fmt.Sprintf("k3s %s refuses the flannel %s backend of %s", b.fatalFrom.MinorString(), b.Backend, check.Plural(len(nodes), "node", "nodes")),
		Message: fmt.Sprintf("From %s a k3s server started with --flannel-backend=%s stops at start with a fatal error, so the upgrade to %s "+
			"fails on the first server. The replacement, %s, stores its keys in another annotation format and cannot form tunnels "+
			"with nodes still on %s: switch every node together, not one at a time (%s)%s.",
			b.fatalFrom.MinorString(), b.Backend, t.MinorString(), b.Replacement, b.Backend, how, check.MoreText(more)),
		Objects:  refs,
		Evidence: []string{fmt.Sprintf("k3s %s: --flannel-backend=%s is a fatal error (%s)", b.fatalFrom.MinorString(), b.Backend, strings.Join(b.Sources, ", "))},
		Remediation: fmt.Sprintf("Before upgrading, set flannel-backend to %s on every server, then reboot all nodes (a short pod-network "+
			"outage while they come back), as docs.k3s.io/installation/network-options describes; upgrade once every node reports the new backend.", b.Replacement),
		Cases: []string{b.Case},
	}
	fd.AddEvidence(check.NodeValues(nodes, func(n *corev1.Node) []finding.Field {
		fields := []finding.Field{finding.Value("status.nodeInfo.kubeletVersion", n.Status.NodeInfo.KubeletVersion)}
		if v, ok := n.Annotations[annotationFlannelBackendType]; ok {
			fields = append(fields, finding.Entry("metadata.annotations["+annotationFlannelBackendType+"]", v))
		}
		return fields
	})...)
	// node-args is kept reduced to the arguments checks read
	// (snapshot.K3sNodeArgsKept), so it is quoted as text, not as the
	// annotation's value.
	for _, n := range named {
		fd.Evidence = append(fd.Evidence, fmt.Sprintf("Node/%s: annotation %s names --flannel-backend %s", n.Name, annotationK3sNodeArgs, b.Backend))
	}
	return fd, true
}

// k3sTraefikMajor finds the packaged Traefik at an older major version on
// a k3s cluster whose target k3s release bundles the next one: the
// upgrade replaces it, and routes it served in the old major's terms
// (IngressRoutes of traefik.containo.us, v2 rule syntax) stop matching.
func k3sTraefikMajor(ctx *check.Context, f *facts, t check.KubeVersion) []finding.Finding {
	bt := f.K3s.BundledTraefik
	if bt.Image == "" {
		return nil
	}
	s := ctx.Snapshot
	var k3sNodes []*corev1.Node
	for i := range s.Nodes {
		if isK3sNode(&s.Nodes[i]) {
			k3sNodes = append(k3sNodes, &s.Nodes[i])
		}
	}
	if len(k3sNodes) == 0 {
		return nil // not k3s: nothing bundled to judge
	}
	// A target of 1.32 names no patch: it parses as 1.32.0, and the k3s
	// 1.32 releases bundle the new major from 1.32.2 on.
	certain := !t.Less(bt.from)
	patchUnknown := !certain && t.Major == bt.from.Major && t.Minor == bt.from.Minor && t.Patch == 0
	if !certain && !patchUnknown {
		return nil
	}
	var out []finding.Finding
	for i := range s.Deployments {
		d := &s.Deployments[i]
		if d.Namespace != "kube-system" {
			continue
		}
		for _, c := range d.Spec.Template.Spec.Containers {
			repo, tag, _ := check.ImageParts(c.Image)
			if !strings.HasSuffix(repo, bt.Image) {
				continue
			}
			major, err := strconv.Atoi(strings.SplitN(strings.TrimPrefix(tag, "v"), ".", 2)[0])
			if err != nil {
				ctx.Incomplete(ruleK3sTraefikMajor, "Deployment %s/%s runs %s, whose tag names no version", d.Namespace, d.Name, c.Image)
				continue
			}
			if major >= bt.Major {
				continue
			}
			ref := check.Ref("apps/v1", "Deployment", d)
			where := fmt.Sprintf("the target %s is a k3s release that bundles Traefik v%d", t.MinorString(), bt.Major)
			if patchUnknown {
				where = fmt.Sprintf("every k3s %s release from v%s+k3s1 on bundles Traefik v%d, so an upgrade to %s reaches it unless it stops at an earlier patch",
					t.MinorString(), bt.from, bt.Major, t.MinorString())
			}
			fd := finding.Finding{
				Check: "upgrade-preflight", Severity: finding.Medium, Preflight: finding.PreflightBefore,
				Title: fmt.Sprintf("The k3s upgrade to %s replaces the packaged Traefik v%d with v%d", t.MinorString(), major, bt.Major),
				Message: fmt.Sprintf("Deployment %s/%s runs k3s's packaged Traefik %s, and %s. Traefik v%d no longer reads objects of the "+
					"traefik.containo.us API group, reads routing rules in its new syntax unless core.defaultRuleSyntax is v2 (a matcher "+
					"such as PathPrefix with two arguments stops matching), and the chart's new release changed what the Service exposes "+
					"(the dashboard port). kubegap does not read IngressRoutes, so which routes break is not judged here.",
					d.Namespace, d.Name, c.Image, where, bt.Major),
				Objects: []finding.ObjectRef{ref},
				Evidence: []string{
					fmt.Sprintf("k3s bundles Traefik v%d from v%s+k3s1 (%s)", bt.Major, bt.from, strings.Join(bt.Sources, ", ")),
					"target " + t.MinorString(),
				},
				Remediation: "Before upgrading, move every Traefik object to the traefik.io API group (kubectl get ingressroutes.traefik.containo.us,middlewares.traefik.containo.us -A " +
					"lists what is left), rewrite rules in v3 syntax or set core.defaultRuleSyntax v2 through a HelmChartConfig for traefik, " +
					"and follow Traefik's v2-to-v3 migration guide (doc.traefik.io/traefik/migration/v2-to-v3).",
				Cases: []string{bt.Case},
			}
			fd.AddEvidence(finding.Quote(ref, finding.Value(check.ContainerField("Deployment", check.Containers, c.Name, "image"), c.Image)))
			fd.AddEvidence(check.NodeValues(k3sNodes[:1], func(n *corev1.Node) []finding.Field {
				return []finding.Field{finding.Value("status.nodeInfo.kubeletVersion", n.Status.NodeInfo.KubeletVersion)}
			})...)
			out = append(out, fd)
			ctx.Unknowable(ruleK3sTraefikMajor, "kubegap does not read Traefik's IngressRoutes and Middlewares: routes in the traefik.containo.us group or in v2 rule syntax are not listed")
		}
	}
	return out
}
