//! The desired state: every resource of the project, validated and typed,
//! with the dependency graph between them.

use std::collections::BTreeMap;

use monform_model::{Address, FieldPath, Resource};
use petgraph::graph::{DiGraph, NodeIndex};
use rayon::prelude::*;
use rustc_hash::FxHashMap;

use crate::declare::Declarations;
use crate::source::Span;

/// What a reference in the files points at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A resource of this project.
    Managed(Address),
    /// An object that exists only remotely (a private location slug).
    Remote(String),
}

/// A reference from one resource's field to another resource.
#[derive(Debug, Clone, PartialEq)]
pub struct Reference {
    pub path: FieldPath,
    pub target: Target,
    pub span: Span,
}

/// One resource as the files describe it.
#[derive(Debug, Clone, PartialEq)]
pub struct DesiredResource {
    pub address: Address,
    /// Typed, with defaults filled in and scripts read from their files.
    /// Boxed: a resource is about 800 bytes, and the load moves each
    /// through several vectors and into the map; boxed, those hold a
    /// pointer each, and two of them alive at once are not 100 MB more at
    /// 100,000 checks.
    pub resource: Box<Resource>,
    /// The logical id's key in its file.
    pub span: Span,
    pub references: Vec<Reference>,
    /// The fields a group can override, where the resource's own entry
    /// writes them (not from `[defaults]`), for the linter.
    pub own_fields: Vec<(&'static str, Span)>,
    /// Fields (file form, as `resource`'s JSON: `name`,
    /// `request.headers[0].value`) whose value holds text substituted from
    /// an environment variable not declared public (`[project] public-env`):
    /// every output masks them.
    pub sensitive: Vec<FieldPath>,
    /// The fields of `sensitive`, each with the environment variables it
    /// read: `monform test --local` runs a check only when `[project]
    /// pass-env` lists every one its effective definition read.
    pub env_reads: Vec<(FieldPath, Vec<String>)>,
}

/// The desired state of a project. An edge `a -> b` means `a` references
/// `b`, so `b` must exist before `a` is created and outlive it.
#[derive(Debug, Default)]
pub struct Desired {
    pub resources: BTreeMap<Address, DesiredResource>,
    /// Edges carry no weight: which field references is in the
    /// resource's `references`, and copies of the paths here were 300,000
    /// allocations and about 20 MB at 100,000 checks.
    pub graph: DiGraph<Address, ()>,
    nodes: FxHashMap<Address, NodeIndex>,
    /// The files' `moved`, `import` and `removed` entries.
    pub declarations: Declarations,
    /// Member checks whose schedule an SLO's `enforce: true` raised, with
    /// their effective schedule as the files wrote it (`slos::enforce`),
    /// for the plan's SLO run budget (`slos::run_costs`).
    pub slo_written: BTreeMap<Address, serde_json::Value>,
}

impl Desired {
    /// The desired state of `resources` (none linked yet; a logical id given
    /// twice keeps the last, as [`Desired::insert`] does). The map is built
    /// at once from the sorted resources, which fills its B-tree nodes,
    /// where inserting one at a time leaves them about half empty: with
    /// resources of about 1 KB that slack was half the map (10 MB of 20 at
    /// 10,000 checks), held until the process ends.
    pub fn from_resources(resources: Vec<DesiredResource>) -> Desired {
        // The map's keys cloned in parallel: a load's main thread built
        // this map alone, a tenth of its wall time at 100,000 checks.
        let mut entries: Vec<(Address, DesiredResource)> = resources
            .into_par_iter()
            .map(|resource| (resource.address.clone(), resource))
            .collect();
        let mut graph = DiGraph::default();
        let mut nodes = FxHashMap::default();
        // Sorted by index, then put in order in place: sorting the entries
        // themselves moved each many times (a seventh of the load of
        // 100,000 checks when an entry held its resource, about 1 KB; with
        // the resource boxed an entry is about 170 bytes, still moved once
        // here instead of about 17 times). The sort is stable, as is
        // collecting's own (then a pass over sorted entries): the last of
        // equal keys wins. The graph's nodes, in the resources' order, are
        // added meanwhile.
        let (order, ()) = rayon::join(
            || {
                let mut order: Vec<usize> = (0..entries.len()).collect();
                order.par_sort_by(|&a, &b| entries[a].0.cmp(&entries[b].0));
                order
            },
            || {
                graph.reserve_nodes(entries.len());
                nodes.reserve(entries.len());
                for (address, _) in &entries {
                    let node = graph.add_node(address.clone());
                    nodes.insert(address.clone(), node);
                }
            },
        );
        permute(&mut entries, &order);
        drop(order);
        Desired {
            // Collecting builds the tree bottom-up, each node full.
            resources: entries.into_iter().collect(),
            graph,
            nodes,
            ..Desired::default()
        }
    }

    pub fn insert(&mut self, resource: DesiredResource) {
        let node = self.graph.add_node(resource.address.clone());
        self.nodes.insert(resource.address.clone(), node);
        self.resources.insert(resource.address.clone(), resource);
    }

    /// Adds an edge for every managed reference; both ends must be inserted.
    pub fn link(&mut self) {
        let edges = self.edges();
        self.add_edges(edges);
    }

    /// The edges [`Desired::link`] adds, found without changing anything:
    /// a load finds them while the linter reads the resources.
    pub fn edges(&self) -> Vec<(NodeIndex, NodeIndex)> {
        let mut edges = Vec::new();
        for resource in self.resources.values() {
            for reference in &resource.references {
                if let Target::Managed(target) = &reference.target
                    && let (Some(&from), Some(&to)) = (self.nodes.get(&resource.address), self.nodes.get(target))
                {
                    edges.push((from, to));
                }
            }
        }
        edges
    }

    /// The graph made again from the resources (after some were replaced:
    /// a file read again); its nodes in the resources' order.
    pub(crate) fn relink(&mut self) {
        self.graph = DiGraph::default();
        self.nodes.clear();
        self.graph.reserve_nodes(self.resources.len());
        for address in self.resources.keys() {
            let node = self.graph.add_node(address.clone());
            self.nodes.insert(address.clone(), node);
        }
        self.link();
    }

    /// Adds [`Desired::edges`]' edges.
    pub fn add_edges(&mut self, edges: Vec<(NodeIndex, NodeIndex)>) {
        self.graph.reserve_edges(edges.len());
        for (from, to) in edges {
            self.graph.add_edge(from, to, ());
        }
    }

    /// Groups of resources that reference each other in a loop.
    pub fn cycles(&self) -> Vec<Vec<Address>> {
        petgraph::algo::tarjan_scc(&self.graph)
            .into_iter()
            .filter(|scc| scc.len() > 1 || self.graph.contains_edge(scc[0], scc[0]))
            .map(|scc| {
                let mut addresses: Vec<Address> = scc.into_iter().map(|n| self.graph[n].clone()).collect();
                addresses.sort();
                addresses
            })
            .collect()
    }

    /// The resources `address` references directly.
    pub fn dependencies(&self, address: &Address) -> Vec<&Address> {
        let Some(&node) = self.nodes.get(address) else {
            return Vec::new();
        };
        self.graph.neighbors(node).map(|n| &self.graph[n]).collect()
    }

    /// What references `address` directly.
    pub fn dependents(&self, address: &Address) -> Vec<&Address> {
        let Some(&node) = self.nodes.get(address) else {
            return Vec::new();
        };
        self.graph
            .neighbors_directed(node, petgraph::Direction::Incoming)
            .map(|n| &self.graph[n])
            .collect()
    }

    pub fn len(&self) -> usize {
        self.resources.len()
    }

    pub fn is_empty(&self) -> bool {
        self.resources.is_empty()
    }
}

/// Puts `items[order[i]]` at `i` for every `i`, in place, each item moved
/// once (`order` a permutation): for long lists of large items, where a
/// sort would move them many times or a copy would double them. Follows
/// each cycle of the permutation once.
pub fn permute<T>(items: &mut [T], order: &[usize]) {
    let mut done = vec![false; items.len()];
    for start in 0..items.len() {
        let mut current = start;
        while !done[current] {
            done[current] = true;
            let next = order[current];
            if next == start {
                break;
            }
            items.swap(current, next);
            current = next;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use monform_model::Kind;

    fn snippet(id: &str, refs: &[&str]) -> DesiredResource {
        let resource = Resource::from_json(Kind::Snippet, serde_json::json!({"name": id, "script": "x"})).unwrap();
        DesiredResource {
            address: Address::new(Kind::Snippet, id),
            resource: Box::new(resource),
            span: Span::new(0, 0, 0),
            references: refs
                .iter()
                .map(|r| Reference {
                    path: FieldPath::root(),
                    target: Target::Managed(Address::new(Kind::Snippet, *r)),
                    span: Span::new(0, 0, 0),
                })
                .collect(),
            own_fields: Vec::new(),
            sensitive: Vec::new(),
            env_reads: Vec::new(),
        }
    }

    /// Built at once, the map holds what inserting one by one holds, in
    /// the same order, and the graph knows every address.
    #[test]
    fn from_resources_matches_inserting_one_by_one() {
        let ids = ["c", "a", "b", "a"];
        let mut inserted = Desired::default();
        for (i, id) in ids.iter().enumerate() {
            let mut resource = snippet(id, &[]);
            resource.span = Span::new(0, i, 1);
            inserted.insert(resource);
        }
        let built = Desired::from_resources(
            ids.iter()
                .enumerate()
                .map(|(i, id)| {
                    let mut resource = snippet(id, &[]);
                    resource.span = Span::new(0, i, 1);
                    resource
                })
                .collect(),
        );
        assert_eq!(
            built.resources.iter().collect::<Vec<_>>(),
            inserted.resources.iter().collect::<Vec<_>>()
        );
        // The second `a` (at 3) is the one kept.
        assert_eq!(built.resources[&Address::new(Kind::Snippet, "a")].span.start, 3);
        for id in ["a", "b", "c"] {
            assert!(built.nodes.contains_key(&Address::new(Kind::Snippet, id)));
        }
    }

    #[test]
    fn finds_cycles_and_only_cycles() {
        let mut desired = Desired::default();
        for (id, refs) in [
            ("a", &["b"][..]),
            ("b", &["c"][..]),
            ("c", &["a"][..]),
            ("d", &["a"][..]),
            ("e", &["e"][..]),
        ] {
            desired.insert(snippet(id, refs));
        }
        desired.link();
        let cycles = desired.cycles();
        assert_eq!(cycles.len(), 2, "{cycles:?}");
        assert!(cycles.iter().any(|c| c.len() == 3));
        assert!(cycles.iter().any(|c| c == &vec![Address::new(Kind::Snippet, "e")]));
    }

    #[test]
    fn dependencies_follow_references() {
        let mut desired = Desired::default();
        desired.insert(snippet("a", &["b"]));
        desired.insert(snippet("b", &[]));
        desired.link();
        assert_eq!(
            desired.dependencies(&Address::new(Kind::Snippet, "a")),
            vec![&Address::new(Kind::Snippet, "b")]
        );
        assert!(desired.cycles().is_empty());
    }

    #[test]
    fn permuting_in_place_puts_each_item_where_the_order_says() {
        for n in [0usize, 1, 2, 9, 50] {
            // i -> (i * 7 + 3) mod n: a permutation of several cycles when 7 and n are coprime.
            let order: Vec<usize> = (0..n).map(|i| (i * 7 + 3) % n).collect();
            let mut seen = order.clone();
            seen.sort_unstable();
            seen.dedup();
            assert_eq!(seen.len(), n);
            let items: Vec<String> = (0..n).map(|i| format!("item {i}")).collect();
            let expected: Vec<String> = order.iter().map(|&old| items[old].clone()).collect();
            let mut permuted = items.clone();
            permute(&mut permuted, &order);
            assert_eq!(permuted, expected, "n = {n}");
        }
    }
}
