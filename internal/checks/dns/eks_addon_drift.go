package dns

import (
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

const (
	eksAddonDriftID   = "eks-addon-drift"
	ruleCorednsEdits  = "coredns-edits-outside-addon"
	caseEKSAddonDrift = "eks-managed-addon-reverts-coredns-customisation-2021-2025"
)

// eksAddonDriftCheck finds edits to the fields EKS's CoreDNS add-on
// manages: EKS applies its add-ons with server-side apply under the field
// manager eks, and a change another manager makes to one of those fields
// holds only until EKS next applies the add-on.
func eksAddonDriftCheck() check.Check {
	return check.Check{
		ID:       eksAddonDriftID,
		Title:    "EKS CoreDNS add-on fields edited outside the add-on, which the next add-on update reverts",
		Severity: finding.Medium,
		Description: "Reads the managedFields of the coredns ConfigMap and Deployment in kube-system, as kubegap notes them " +
			"before dropping managedFields (annotations " + snapshot.AnnotationFieldManagers + " and " +
			snapshot.AnnotationManagedEdits + "). When the field manager eks is among them, the object belongs to EKS's " +
			"managed CoreDNS add-on, and the EKS user guide warns that a change to a field EKS manages may be overwritten " +
			"when the add-on is updated. Medium for each such object whose data.Corefile or spec.replicas is owned by " +
			"another manager (kubectl, Terraform, a GitOps tool; EKS's own and Kubernetes control-plane managers are not " +
			"counted): users lost custom forward zones and scaled-out replicas this way. Objects read without " +
			"managedFields (kubectl get omits them unless given --show-managed-fields) leave the rule partial, as an " +
			"opt-in not taken, on EKS or where the input does not say whether the cluster is EKS; elsewhere there is no " +
			"add-on to revert them. Cannot see: whether the add-on's " +
			"conflict setting preserves the change (it lives in the EKS API, not in the cluster).",
		Reads: check.Needs(snapshot.ConfigMaps, snapshot.Deployments),
		Rules: []check.Rule{
			{ID: ruleCorednsEdits, Summary: "no field EKS's CoreDNS add-on manages is owned by another manager",
				Needs: []snapshot.Resource{snapshot.ConfigMaps, snapshot.Deployments}},
		},
		Cases: check.Prevents(caseEKSAddonDrift),
		Run:   runEKSAddonDrift,
	}
}

func runEKSAddonDrift(ctx *check.Context) ([]finding.Finding, error) {
	s := ctx.Snapshot
	var out []finding.Finding
	eks, known := isEKS(ctx)
	judge := func(ref finding.ObjectRef, meta *metav1.ObjectMeta, quote []finding.Field) {
		managers, noted := meta.Annotations[snapshot.AnnotationFieldManagers]
		if !noted {
			// EKS add-ons exist only on EKS; elsewhere nothing reverts
			// the object, whoever owns its fields. A live read always
			// has managedFields; files have them only when asked for,
			// so their absence is an opt-in not taken, not a gap in
			// what was read.
			if eks || !known {
				ctx.NotRequested(ruleCorednsEdits, "%s was read without metadata.managedFields (kubectl get omits them unless "+
					"given --show-managed-fields): who owns its fields is unknown", ref)
			}
			return
		}
		if !strings.Contains(","+managers+",", ",eks,") {
			return // self-managed CoreDNS: no add-on to revert it
		}
		edits := meta.Annotations[snapshot.AnnotationManagedEdits]
		if edits == "" {
			return
		}
		pairs := strings.Split(edits, ",")
		var fields, owners []string
		// The managedFields entries named: eks's, and each other owner's.
		entries := []finding.Field{finding.Value("metadata.managedFields[manager=eks].manager", "eks")}
		for _, p := range pairs {
			field, owner, _ := strings.Cut(p, "=")
			fields = append(fields, field)
			owners = append(owners, fmt.Sprintf("%s (by %s)", field, owner))
			path := "metadata.managedFields[manager=" + owner + "].manager"
			if !slices.ContainsFunc(entries, func(f finding.Field) bool { return f.Path == path }) {
				entries = append(entries, finding.Value(path, owner))
			}
		}
		f := finding.Finding{
			Check: eksAddonDriftID, Rule: ruleCorednsEdits, Severity: finding.Medium, Cases: []string{caseEKSAddonDrift},
			Objects: []finding.ObjectRef{ref},
			Title:   fmt.Sprintf("%s of EKS's CoreDNS add-on has %s edited outside the add-on", ref, strings.Join(fields, " and ")),
			Message: fmt.Sprintf("%s is managed by the EKS add-on (field manager eks), but %s now belong to another manager. "+
				"EKS re-applies the fields it manages, and its user guide warns that such a change may be overwritten when the "+
				"add-on is updated: users lost custom Corefile forward zones and scaled-out CoreDNS replicas this way.",
				ref, strings.Join(owners, ", ")),
			Remediation: "Move the change into the add-on's configuration values (aws eks describe-addon-configuration --addon-name " +
				"coredns lists them, replicaCount and corefile among them), or take CoreDNS over fully: delete the add-on with " +
				"--preserve and manage it yourself. Check which manager owns each field with kubectl get --show-managed-fields.",
		}
		f.Evidence = append(f.Evidence, fmt.Sprintf("%s: metadata.managedFields managers %s; fields owned outside the add-on: %s",
			ref, managers, strings.Join(owners, ", ")))
		f.AddEvidence(finding.Quote(ref, append(entries, quote...)...))
		out = append(out, f)
	}
	cms := check.ConfigMapsByKey(s)
	if cm := cms["kube-system/coredns"]; cm != nil {
		judge(check.Ref("v1", "ConfigMap", cm), &cm.ObjectMeta, nil)
	}
	for i := range s.Deployments {
		d := &s.Deployments[i]
		if d.Namespace == "kube-system" && d.Name == "coredns" {
			judge(check.Ref("apps/v1", "Deployment", d), &d.ObjectMeta,
				[]finding.Field{finding.Value("spec.replicas", check.SpecReplicas(d.Spec.Replicas))})
		}
	}
	return out, nil
}
