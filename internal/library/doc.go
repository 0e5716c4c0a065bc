// Package library loads, validates and queries kubegap's incident library:
// public Kubernetes failures written up as structured cases (library/cases)
// and the facets they are filed under (library/taxonomy.yaml).
//
// Loading is strict, because the library is reviewed like code: an unknown
// field, a missing section, a facet value the taxonomy does not define or a
// source without a URL is an error that names the file. Queries filter by
// facet (AND across facets, OR within one), search the text, page, and count
// every facet value under the current filter, as a faceted search page does.
package library
