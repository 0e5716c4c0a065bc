package runtime

// The calico-iptables-auto rule of dataplane-node-compat: calico-node
// releases whose automatic iptables backend detection chose legacy on
// RHEL 8 family nodes, run there with the detection on.

import (
	"fmt"
	"regexp"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

const (
	ruleCalicoAuto      = "calico-iptables-auto"
	calicoBackendEnv    = "FELIX_IPTABLESBACKEND"
	maxCalicoAutoListed = 10
)

type calicoAutoRow struct {
	dataplaneRow
	CalicoImage string `json:"calicoImage"`
	// AutoDefault is the first calico-node release whose Felix detects the
	// backend when FELIX_IPTABLESBACKEND is unset; before it, unset meant
	// Legacy, which the rule leaves alone as it does Legacy set by hand.
	AutoDefault string   `json:"autoDefault"`
	Fixed       []string `json:"fixed"`
	OSImage     string   `json:"osImage"`
	imageRE     *regexp.Regexp
	autoDefault check.KubeVersion
	fixed       []check.KubeVersion
	osRE        *regexp.Regexp
}

func (r *calicoAutoRow) parse() error {
	if err := rowOK(r.dataplaneRow); err != nil {
		return err
	}
	var ok bool
	if r.autoDefault, ok = check.ParseKubeVersion(r.AutoDefault); !ok {
		return dataErr("calicoIPTablesAuto.autoDefault", r.AutoDefault)
	}
	if r.fixed, ok = ascending(r.Fixed); !ok {
		return dataErr("calicoIPTablesAuto.fixed (ascending versions)", r.Fixed)
	}
	var err error
	if r.imageRE, err = regexp.Compile(r.CalicoImage); err != nil || r.CalicoImage == "" {
		return dataErr("calicoIPTablesAuto.calicoImage", r.CalicoImage)
	}
	if r.osRE, err = regexp.Compile(r.OSImage); err != nil || r.OSImage == "" {
		return dataErr("calicoIPTablesAuto.osImage", r.OSImage)
	}
	return nil
}

func calicoAutoFindings(ctx *check.Context, facts *dataplaneFacts) []finding.Finding {
	var out []finding.Finding
	for i := range facts.CalicoIPTablesAuto {
		r := &facts.CalicoIPTablesAuto[i]
		for j := range ctx.Snapshot.DaemonSets {
			d := &ctx.Snapshot.DaemonSets[j]
			if f, ok := calicoAutoFinding(ctx, d, r); ok {
				out = append(out, f)
			}
		}
	}
	return out
}

func calicoAutoFinding(ctx *check.Context, d *appsv1.DaemonSet, r *calicoAutoRow) (finding.Finding, bool) {
	for ci := range d.Spec.Template.Spec.Containers {
		c := &d.Spec.Template.Spec.Containers[ci]
		repo, tag, _ := check.ImageParts(c.Image)
		if !r.imageRE.MatchString(repo) {
			continue
		}
		v, ok := check.ParseKubeVersion(tag)
		if !ok {
			ctx.Incomplete(ruleCalicoAuto, "DaemonSet %s/%s image %s carries no version tag kubegap can read", d.Namespace, d.Name, c.Image)
			return finding.Finding{}, false
		}
		if carriesFix(v, r.fixed) {
			return finding.Finding{}, false
		}
		backend, set := envValue(c, calicoBackendEnv)
		switch {
		case set && backend == snapshot.Redacted:
			ctx.Incomplete(ruleCalicoAuto, "DaemonSet %s/%s sets %s from a source kubegap does not read, so whether Calico detects "+
				"the iptables backend itself is unknown", d.Namespace, d.Name, calicoBackendEnv)
			return finding.Finding{}, false
		case set && !strings.EqualFold(backend, "auto"):
			return finding.Finding{}, false // Legacy or NFT chosen by hand
		case !set && v.Less(r.autoDefault):
			return finding.Finding{}, false // Felix's default was still Legacy
		}
		var nodes []*corev1.Node
		for i := range ctx.Snapshot.Nodes {
			n := &ctx.Snapshot.Nodes[i]
			if r.osRE.MatchString(n.Status.NodeInfo.OSImage) && targets(&d.Spec.Template.Spec, n) {
				nodes = append(nodes, n)
			}
		}
		if len(nodes) == 0 {
			return finding.Finding{}, false
		}
		return calicoAutoReport(d, c, ci, v, backend, set, nodes, r), true
	}
	return finding.Finding{}, false
}

// envValue is the value of the container's variable name as kept (a
// literal from keptEnvValues, else Redacted) and whether it is set.
func envValue(c *corev1.Container, name string) (string, bool) {
	for _, e := range c.Env {
		if e.Name == name {
			if e.Value == "" && e.ValueFrom != nil {
				return snapshot.Redacted, true
			}
			return e.Value, true
		}
	}
	return "", false
}

func calicoAutoReport(d *appsv1.DaemonSet, c *corev1.Container, ci int, v check.KubeVersion, backend string, set bool,
	nodes []*corev1.Node, r *calicoAutoRow) finding.Finding {
	ref := check.Ref("apps/v1", "DaemonSet", d)
	how := fmt.Sprintf("%s is not set: Felix then detects the backend itself (its default from %s) unless its config file or a "+
		"FelixConfiguration, which kubegap does not read, sets iptablesBackend", calicoBackendEnv, r.autoDefault.String())
	title := fmt.Sprintf("calico-node %s leaves the iptables backend to automatic detection on %d RHEL 8 family node(s), where that detection chose legacy",
		v.String(), len(nodes))
	envField := finding.Absent(fmt.Sprintf("spec.template.spec.containers[name=%s].env[name=%s]", c.Name, calicoBackendEnv))
	if set {
		// The value itself is not printed: kubegap prints no environment
		// variable's value, even a mode word like this one, which the
		// snapshot keeps only to judge it.
		how = calicoBackendEnv + " is set to the value that leaves the backend to Felix's own detection (kubegap prints no " +
			"environment variable values)"
		title = fmt.Sprintf("calico-node %s detects the iptables backend itself on %d RHEL 8 family node(s), where that detection chose legacy",
			v.String(), len(nodes))
		envField = finding.Value(fmt.Sprintf("spec.template.spec.containers[name=%s].env[name=%s].name", c.Name, calicoBackendEnv), calicoBackendEnv)
	}
	names := make([]string, len(nodes))
	objects := []finding.ObjectRef{ref}
	for i, n := range nodes {
		names[i] = n.Name
		objects = append(objects, check.NodeRef(n.Name))
	}
	f := finding.Finding{
		Check: dataplaneID, Severity: finding.Medium, Cases: []string{r.Case},
		Objects: objects,
		Title:   title,
		Message: strings.TrimSpace(r.Note),
		Evidence: []string{
			fmt.Sprintf("DaemonSet %s/%s runs %s (before %s); %s", d.Namespace, d.Name, c.Image, versionsText(r.fixed), how),
			fmt.Sprintf("nodes on a RHEL 8 family image: %s", check.ListText(names, maxCalicoAutoListed)),
			fmt.Sprintf("reviewed %s; sources: %s", r.Reviewed, strings.Join(r.Sources, ", ")),
		},
		Remediation: fmt.Sprintf("Upgrade Calico to %s or later. Until then choose the backend by hand on these nodes only (other "+
			"nodes may be legacy hosts): a host-specific FelixConfiguration node.<name> with iptablesBackend NFT where %s is unset, "+
			"or %s=NFT on a calico-node DaemonSet limited to them; the variable takes precedence over any FelixConfiguration, and "+
			"kubegap does not read FelixConfigurations, so this finding stays until the variable or the version changes. Compare "+
			"iptables -V in calico-node with the host's on one of the nodes first.", versionsText(r.fixed), calicoBackendEnv, calicoBackendEnv),
	}
	f.AddEvidence(finding.Quote(ref, finding.Value(fmt.Sprintf("spec.template.spec.containers[%d].image", ci), c.Image), envField))
	f.AddEvidence(check.NodeValues(nodes, func(n *corev1.Node) []finding.Field {
		return []finding.Field{finding.Value("status.nodeInfo.osImage", n.Status.NodeInfo.OSImage)}
	})...)
	return f
}
