//! The concrete state space of a domain under every operator (no policy), the optimal planner's
//! distances to the goal over it, and the expert's label.

use crate::model::{Domain, State};
use std::collections::{HashMap, VecDeque};

/// The states reachable from some roots under any operator, with the transitions between them.
#[derive(Clone, Debug)]
pub struct Space {
    /// In breadth-first order from the roots.
    pub states: Vec<State>,
    pub index: HashMap<State, usize>,
    /// Per state: (label, successor index), in command order.
    pub edges: Vec<Vec<(usize, usize)>>,
    /// Per state: the length of a shortest operator sequence to a goal state (`None`: no path).
    pub dist: Vec<Option<u32>>,
}

impl Space {
    /// Explores forward from `roots` under every command (at most `limit` states) and computes the
    /// distances to the goal backwards from the goal states found.
    pub fn explore(domain: &Domain, roots: &[State], limit: usize) -> Result<Space, String> {
        let mut states: Vec<State> = Vec::new();
        let mut index: HashMap<State, usize> = HashMap::new();
        for r in roots {
            if !index.contains_key(r) {
                index.insert(r.clone(), states.len());
                states.push(r.clone());
            }
        }
        let mut edges = Vec::new();
        let mut i = 0;
        while i < states.len() {
            let mut out = Vec::new();
            for (label, _, next) in domain.successors(&states[i]) {
                let j = match index.get(&next) {
                    Some(&j) => j,
                    None => {
                        if states.len() >= limit {
                            return Err(format!("more than {limit} states reachable under any operator"));
                        }
                        index.insert(next.clone(), states.len());
                        states.push(next);
                        states.len() - 1
                    }
                };
                out.push((label, j));
            }
            edges.push(out);
            i += 1;
        }
        let mut space = Space { states, index, edges, dist: Vec::new() };
        space.dist = space.goal_distances(domain);
        Ok(space)
    }

    /// Backward breadth-first search from the goal states over the reversed transitions.
    fn goal_distances(&self, domain: &Domain) -> Vec<Option<u32>> {
        let mut preds: Vec<Vec<usize>> = vec![Vec::new(); self.states.len()];
        for (i, out) in self.edges.iter().enumerate() {
            for &(_, j) in out {
                preds[j].push(i);
            }
        }
        let mut dist = vec![None; self.states.len()];
        let mut queue = VecDeque::new();
        for (i, s) in self.states.iter().enumerate() {
            if domain.is_goal(s) {
                dist[i] = Some(0);
                queue.push_back(i);
            }
        }
        while let Some(j) = queue.pop_front() {
            let d = dist[j].expect("queued states have a distance") + 1;
            for &i in &preds[j] {
                if dist[i].is_none() {
                    dist[i] = Some(d);
                    queue.push_back(i);
                }
            }
        }
        dist
    }

    /// The optimal planner's choice at state `i`: the lowest-index label of a move to a state one
    /// step closer to the goal; in a goal state (and where the goal cannot be reached) the
    /// domain's stop label.
    pub fn expert(&self, domain: &Domain, i: usize) -> usize {
        let Some(d) = self.dist[i].filter(|&d| d > 0) else { return domain.stop_label };
        self.edges[i]
            .iter()
            .filter(|&&(_, j)| self.dist[j] == Some(d - 1))
            .map(|&(label, _)| label)
            .min()
            .expect("a state at distance d > 0 has a move to distance d - 1")
    }

    /// The states the expert's runs from state `i` visit (`i` included): breadth-first along the
    /// transitions of the expert's label.
    pub fn expert_run(&self, domain: &Domain, i: usize) -> Vec<usize> {
        let mut seen = vec![i];
        let mut k = 0;
        while k < seen.len() {
            let s = seen[k];
            let label = self.expert(domain, s);
            for &(l, j) in &self.edges[s] {
                if l == label && !seen.contains(&j) {
                    seen.push(j);
                }
            }
            k += 1;
        }
        seen
    }

    /// Multi-source breadth-first distances from `sources` along the transitions (any operator).
    pub fn distances_from(&self, sources: &[usize]) -> Vec<Option<u32>> {
        let mut dist = vec![None; self.states.len()];
        let mut queue = VecDeque::new();
        for &s in sources {
            if dist[s].is_none() {
                dist[s] = Some(0);
                queue.push_back(s);
            }
        }
        while let Some(i) = queue.pop_front() {
            let d = dist[i].expect("queued states have a distance") + 1;
            for &(_, j) in &self.edges[i] {
                if dist[j].is_none() {
                    dist[j] = Some(d);
                    queue.push_back(j);
                }
            }
        }
        dist
    }
}
