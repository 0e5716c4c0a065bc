package runtime

// The cni-masquerade-random-fully rule of dataplane-node-compat: Flannel and
// Calico masquerading pod traffic without fully random source ports, with the
// flanneld flags and Calico IPPools it reads.

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// masqRandomFullyRow: a CNI agent whose masquerade rules use
// --random-fully from the releases in FixedIn on (first per minor), unless
// DisableFlag is set. Flannel masquerades with MasqFlag, Calico for IPPools
// with natOutgoing.
type masqRandomFullyRow struct {
	dataplaneRow
	Agent       string   `json:"agent"`
	Image       string   `json:"image"`
	MasqFlag    string   `json:"masqFlag"`
	FixedIn     []string `json:"fixedIn"`
	DisableFlag string   `json:"disableFlag"`
	imageRE     *regexp.Regexp
	fixedIn     []check.KubeVersion
}

func (r *masqRandomFullyRow) parse() error {
	if err := rowOK(r.dataplaneRow); err != nil {
		return err
	}
	var err error
	if r.imageRE, err = regexp.Compile(r.Image); err != nil || r.Image == "" ||
		!(r.Agent == "flannel" && r.MasqFlag != "" || r.Agent == "calico") {
		return dataErr("masqRandomFully.image, agent (flannel with masqFlag, or calico)", r.Agent)
	}
	var ok bool
	if r.fixedIn, ok = ascending(r.FixedIn); !ok {
		return dataErr("masqRandomFully.fixedIn (ascending versions)", r.FixedIn)
	}
	return nil
}

// flagOn reports whether a boolean flanneld flag is set, as "--f" or
// "--f=true" in the arguments or, as Canal sets it, in the FLANNELD_F
// environment variable, literal or from a ConfigMap key. known is false
// when the variable's value is not in the input. Values are compared,
// never printed.
func flagOn(ctx *check.Context, fl flannelDS, flag string) (on, known bool) {
	for _, a := range fl.args {
		if a == flag {
			return true, true
		}
		if v, ok := strings.CutPrefix(a, flag+"="); ok {
			return truthy(v), true
		}
	}
	name := "FLANNELD_" + strings.ToUpper(strings.ReplaceAll(strings.TrimLeft(flag, "-"), "-", "_"))
	for _, e := range fl.env {
		if e.Name != name {
			continue
		}
		if e.ValueFrom == nil {
			return truthy(e.Value), true
		}
		if ref := e.ValueFrom.ConfigMapKeyRef; ref != nil {
			return configMapKey(ctx.Snapshot, fl.ds.Namespace, ref.Name, ref.Key)
		}
		return false, false
	}
	return false, true
}

func truthy(v string) bool {
	b, err := strconv.ParseBool(strings.TrimSpace(v))
	return err == nil && b
}

func configMapKey(s *snapshot.Snapshot, ns, name, key string) (on, known bool) {
	for i := range s.ConfigMaps {
		if cm := &s.ConfigMaps[i]; cm.Namespace == ns && cm.Name == name {
			v, ok := cm.Data[key]
			return ok && truthy(v), true
		}
	}
	return false, false
}

func masqFindings(ctx *check.Context, facts *dataplaneFacts, fls []flannelDS) []finding.Finding {
	var out []finding.Finding
	for i := range facts.MasqRandomFully {
		r := &facts.MasqRandomFully[i]
		switch r.Agent {
		case "flannel":
			for _, fl := range fls {
				if f, ok := flannelMasq(ctx, fl, r); ok {
					out = append(out, f)
				}
			}
		case "calico":
			out = append(out, calicoMasq(ctx, r)...)
		}
	}
	return out
}

// masqAgentVersion reads the release of an agent image the row knows; ok is
// false, with a note, for other builds and unreadable tags.
func masqAgentVersion(ctx *check.Context, d *appsv1.DaemonSet, image string, r *masqRandomFullyRow) (check.KubeVersion, bool) {
	repo, tag, _ := check.ImageParts(image)
	if !r.imageRE.MatchString(repo) {
		ctx.Incomplete(ruleMasqRandom, "DaemonSet %s/%s runs %s from image %s, whose release kubegap cannot tell",
			d.Namespace, d.Name, r.Agent, image)
		return check.KubeVersion{}, false
	}
	v, ok := check.ParseKubeVersion(tag)
	if !ok {
		ctx.Incomplete(ruleMasqRandom, "DaemonSet %s/%s image %s carries no version tag kubegap can read",
			d.Namespace, d.Name, image)
	}
	return v, ok
}

func flannelMasq(ctx *check.Context, fl flannelDS, r *masqRandomFullyRow) (finding.Finding, bool) {
	d := fl.ds
	on, known := flagOn(ctx, fl, r.MasqFlag)
	if !known {
		ctx.Incomplete(ruleMasqRandom, "DaemonSet %s/%s takes %s from a value that is not in the input",
			d.Namespace, d.Name, r.MasqFlag)
	}
	if !on {
		return finding.Finding{}, false
	}
	if r.DisableFlag != "" && disabled(ctx, fl, r.DisableFlag) {
		return masqFinding(d, fl.image, r, fmt.Sprintf("DaemonSet %s/%s sets %s and %s", d.Namespace, d.Name,
			r.MasqFlag, r.DisableFlag)), true
	}
	v, ok := masqAgentVersion(ctx, d, fl.image, r)
	if !ok || carriesFix(v, r.fixedIn) {
		return finding.Finding{}, false
	}
	return masqFinding(d, fl.image, r, fmt.Sprintf("DaemonSet %s/%s sets %s and runs flannel %s, before %s",
		d.Namespace, d.Name, r.MasqFlag, v.String(), versionsText(r.fixedIn))), true
}

// calicoMasq: calico-node releases before the fix, when an enabled IPPool
// has natOutgoing.
func calicoMasq(ctx *check.Context, r *masqRandomFullyRow) []finding.Finding {
	var out []finding.Finding
	var pool string
	var poolsRead bool
	for i := range ctx.Snapshot.DaemonSets {
		d := &ctx.Snapshot.DaemonSets[i]
		for _, c := range d.Spec.Template.Spec.Containers {
			if !r.imageRE.MatchString(imageRepo(c.Image)) {
				continue
			}
			v, ok := masqAgentVersion(ctx, d, c.Image, r)
			if !ok || carriesFix(v, r.fixedIn) {
				break
			}
			if !poolsRead {
				pool, poolsRead = natOutgoingPool(ctx), true
			}
			if pool != "" {
				out = append(out, masqFinding(d, c.Image, r, fmt.Sprintf("DaemonSet %s/%s runs calico-node %s, before %s; %s",
					d.Namespace, d.Name, v.String(), versionsText(r.fixedIn), pool)))
			}
			break
		}
	}
	return out
}

// natOutgoingPool names an enabled IPPool with natOutgoing, "" if none;
// IPPools not in the input leave a note.
func natOutgoingPool(ctx *check.Context) string {
	for _, p := range ctx.Snapshot.CustomObjects(snapshot.CalicoIPPools) {
		nat, _, _ := unstructured.NestedBool(p.Object, "spec", "natOutgoing")
		off, _, _ := unstructured.NestedBool(p.Object, "spec", "disabled")
		if nat && !off {
			return fmt.Sprintf("IPPool %s has natOutgoing", p.GetName())
		}
	}
	if !ctx.Complete(snapshot.CalicoIPPools) {
		ctx.Incomplete(ruleMasqRandom, "Calico IPPools (crd.projectcalico.org) are not in the input, so whether Calico masquerades is unknown")
	}
	return ""
}

// agentNames are the masquerading agents as titles name them.
var agentNames = map[string]string{"flannel": "Flannel", "calico": "Calico"}

func masqFinding(d *appsv1.DaemonSet, image string, r *masqRandomFullyRow, why string) finding.Finding {
	fix := fmt.Sprintf("Run %s %s or later", r.Agent, versionsText(r.fixedIn))
	if r.DisableFlag != "" {
		fix += " without " + r.DisableFlag
	}
	f := finding.Finding{
		Check: dataplaneID, Severity: finding.Medium, Cases: []string{r.Case},
		Objects:  []finding.ObjectRef{check.Ref("apps/v1", "DaemonSet", d)},
		Title:    fmt.Sprintf("%s masquerades pod traffic without fully random source ports", agentNames[r.Agent]),
		Message:  strings.TrimSpace(r.Note),
		Evidence: []string{why, fmt.Sprintf("reviewed %s; sources: %s", r.Reviewed, strings.Join(r.Sources, ", "))},
		Remediation: fix + ", so its MASQUERADE rules use --random-fully (the iptables in the image must support it); " +
			"watch the conntrack insert_failed counter on busy nodes.",
	}
	withImage(&f, d, image)
	return f
}

// disabled: the agent turns --random-fully off; a value kubegap cannot
// read counts as off, with a note.
func disabled(ctx *check.Context, fl flannelDS, flag string) bool {
	on, known := flagOn(ctx, fl, flag)
	if !known {
		ctx.Incomplete(ruleMasqRandom, "DaemonSet %s/%s takes %s from a value that is not in the input",
			fl.ds.Namespace, fl.ds.Name, flag)
	}
	return on
}
