package testcluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// bootstrap grants the users their access: the reader gets every
// ClusterRole of deploy/rbac.yaml cluster-wide, the ns-viewer gets "view"
// (created by the API server's bootstrap policy, its rules aggregated
// here) in ViewerNamespace. It
// returns once the authorizer has seen the bindings.
func (c *Cluster) bootstrap(ctx context.Context, root string) error {
	rbacFile := filepath.Join(root, "deploy", "rbac.yaml")
	b, err := os.ReadFile(rbacFile)
	if err != nil {
		return fmt.Errorf("reading the reader's role: %w", err)
	}
	objs, err := decodeObjects(b)
	if err != nil {
		return fmt.Errorf("%s: %w", rbacFile, err)
	}
	var roles []string
	for _, o := range objs {
		if o.GetKind() == "ClusterRole" {
			roles = append(roles, o.GetName())
		}
	}
	if len(roles) == 0 {
		return fmt.Errorf("%s holds no ClusterRole for the reader", rbacFile)
	}
	var grants []runtime.Object
	for _, r := range roles {
		grants = append(grants, &rbacv1.ClusterRoleBinding{
			TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRoleBinding"},
			ObjectMeta: metav1.ObjectMeta{Name: "testbed-reader-" + r},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: r},
			Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: UserReader}},
		})
	}
	grants = append(grants, &rbacv1.RoleBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "RoleBinding"},
		ObjectMeta: metav1.ObjectMeta{Name: "testbed-ns-viewer", Namespace: ViewerNamespace},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "view"},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: UserNSViewer}},
	})
	for _, g := range grants {
		u, err := toUnstructured(g)
		if err != nil {
			return err
		}
		objs = append(objs, u)
	}
	if _, err := c.apply(ctx, metav1.NamespaceDefault, objs); err != nil {
		return fmt.Errorf("granting the test users access: %w", err)
	}
	if err := c.aggregateClusterRoles(ctx); err != nil {
		return err
	}

	// Ask as the admin, so the users' own audit trail starts clean.
	checks := []authorizationv1.SubjectAccessReviewSpec{
		{User: UserReader, ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: "list", Resource: "pods"}},
		{User: UserNSViewer, ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: "list", Resource: "pods", Namespace: ViewerNamespace}},
	}
	sar := c.clients[UserAdmin].AuthorizationV1().SubjectAccessReviews()
	for _, spec := range checks {
		for {
			got, err := sar.Create(ctx, &authorizationv1.SubjectAccessReview{Spec: spec}, metav1.CreateOptions{})
			if err == nil && got.Status.Allowed {
				break
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("RBAC for %s not in effect: %w (last: %v)", spec.User, ctx.Err(), err)
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
	return nil
}

// aggregateClusterRoles does once what kube-controller-manager's
// clusterrole-aggregation controller does continuously: the built-in
// admin, edit and view roles are created with an aggregationRule and no
// rules, and only that controller fills them in from the roles their
// selectors match.
func (c *Cluster) aggregateClusterRoles(ctx context.Context) error {
	crs := c.clients[UserAdmin].RbacV1().ClusterRoles()
	// Two passes, so that a role aggregating another aggregated role sees
	// the rules the first pass filled in.
	for range 2 {
		all, err := crs.List(ctx, metav1.ListOptions{})
		if err != nil {
			return fmt.Errorf("listing ClusterRoles: %w", err)
		}
		for i := range all.Items {
			role := &all.Items[i]
			if role.AggregationRule == nil {
				continue
			}
			var rules []rbacv1.PolicyRule
			for _, sel := range role.AggregationRule.ClusterRoleSelectors {
				s, err := metav1.LabelSelectorAsSelector(&sel)
				if err != nil {
					return fmt.Errorf("ClusterRole %s: %w", role.Name, err)
				}
				matched, err := crs.List(ctx, metav1.ListOptions{LabelSelector: s.String()})
				if err != nil {
					return fmt.Errorf("listing ClusterRoles for %s: %w", role.Name, err)
				}
				for _, m := range matched.Items {
					if m.Name == role.Name {
						continue
					}
					for _, r := range m.Rules {
						if !containsRule(rules, r) {
							rules = append(rules, r)
						}
					}
				}
			}
			if equality.Semantic.DeepEqual(rules, role.Rules) {
				continue
			}
			role.Rules = rules
			if _, err := crs.Update(ctx, role, metav1.UpdateOptions{FieldManager: fieldManager}); err != nil {
				return fmt.Errorf("aggregating ClusterRole %s: %w", role.Name, err)
			}
		}
	}
	return nil
}

func containsRule(rules []rbacv1.PolicyRule, r rbacv1.PolicyRule) bool {
	for _, x := range rules {
		if equality.Semantic.DeepEqual(x, r) {
			return true
		}
	}
	return false
}
