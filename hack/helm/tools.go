//go:build tools

// Package tools pins helm, which renders the real-manifests corpus of
// kubegap's tests (internal/checks/realmanifests). It lives outside the main
// module so that helm's dependency graph never reaches kubegap's go.mod.
package tools

import _ "helm.sh/helm/v3/cmd/helm"
