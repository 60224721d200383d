//! The three planning domains of the CEGAR paper, rebuilt as guarded commands.

use crate::model::{Atom, Command, Domain, Input, Op, Rhs, Term, Var};

/// Blocksworld with `n` blocks: `on_b` in [0, n] (0 = on the table, j = on block j) and `table` in
/// [0, n], the number of blocks on the table, kept by the updates. Labels `move_B_to_D` (all of
/// them first) and `move_B_to_table`; a block moves when nothing is on it, onto the table or onto another clear block,
/// never where it already is. Moving onto a block is two commands of one label, split by whether
/// the block leaves the table (`table` decreases) or another block. The goal is the tower
/// 1 on 2 on .. on n; its stop label `move_N_to_table` (block n is already on the table).
pub fn blocks(n: usize) -> Domain {
    let n_i = n as i64;
    let mut vars: Vec<Var> = (1..=n).map(|b| Var { name: format!("on{b}"), lo: 0, hi: n_i }).collect();
    vars.push(Var { name: "table".into(), lo: 0, hi: n_i });
    let on = |b: usize| b - 1;
    let table = n;
    // Nothing is on block x.
    let clear =
        |x: usize| -> Vec<Atom> { (1..=n).filter(|&y| y != x).map(|y| Atom::new(on(y), Op::Ne, x as i64)).collect() };
    // Labels onto blocks first, onto the table last: the expert (lowest index among the optimal
    // moves) stacks rather than unstacks when both are optimal.
    let mut labels = Vec::new();
    let mut commands = Vec::new();
    for b in 1..=n {
        for d in (1..=n).filter(|&d| d != b) {
            let label = labels.len();
            labels.push(format!("move_{b}_to_{d}"));
            let mut from_table = vec![Atom::new(on(b), Op::Eq, 0)];
            from_table.extend(clear(b));
            from_table.extend(clear(d));
            commands.push(Command {
                label,
                name: format!("move_{b}_to_{d}_from_table"),
                guard: from_table,
                update: vec![(on(b), Rhs::Const(d as i64)), (table, Rhs::Shift(table, -1))],
            });
            let mut from_block = vec![Atom::new(on(b), Op::Ge, 1), Atom::new(on(b), Op::Ne, d as i64)];
            from_block.extend(clear(b));
            from_block.extend(clear(d));
            commands.push(Command {
                label,
                name: format!("move_{b}_to_{d}_from_block"),
                guard: from_block,
                update: vec![(on(b), Rhs::Const(d as i64))],
            });
        }
    }
    for b in 1..=n {
        let label = labels.len();
        labels.push(format!("move_{b}_to_table"));
        let mut guard = vec![Atom::new(on(b), Op::Ge, 1)];
        guard.extend(clear(b));
        commands.push(Command {
            label,
            name: format!("move_{b}_to_table"),
            guard,
            update: vec![(on(b), Rhs::Const(0)), (table, Rhs::Shift(table, 1))],
        });
    }
    let mut inputs: Vec<Input> = (1..=n).map(|b| Input { terms: vec![(on(b), 1)], divisor: n_i }).collect();
    inputs.push(Input { terms: vec![(table, 1)], divisor: n_i });
    let mut goal: Vec<Atom> = (1..n).map(|b| Atom::new(on(b), Op::Eq, b as i64 + 1)).collect();
    goal.push(Atom::new(on(n), Op::Eq, 0));
    goal.push(Atom::new(table, Op::Eq, 1));
    let stop_label = labels.iter().position(|l| *l == format!("move_{n}_to_table")).expect("a label per block");
    Domain { vars, labels, commands, inputs, goal, stop_label }
}

/// The cells of the 3x3 board, row by row.
pub const CELLS: usize = 9;

/// The 8-puzzle: `cB` in [0, 8] is the tile in cell B (cells 0..8 row by row, 0 = blank). Labels
/// are the blank's moves `up`, `down`, `left`, `right`: one command per label and blank cell
/// (guard: the blank is there), which swaps the blank with the neighbouring tile. The goal is
/// 1 2 3 / 4 5 6 / 7 8 _; its stop label `down` (the blank is in the bottom row).
pub fn puzzle8() -> Domain {
    let vars: Vec<Var> = (0..CELLS).map(|c| Var { name: format!("c{c}"), lo: 0, hi: 8 }).collect();
    let labels: Vec<String> = ["up", "down", "left", "right"].iter().map(|s| s.to_string()).collect();
    let neighbour = |dir: usize, i: usize| -> Option<usize> {
        let (row, col) = (i / 3, i % 3);
        match dir {
            0 => (row > 0).then(|| i - 3),
            1 => (row < 2).then(|| i + 3),
            2 => (col > 0).then(|| i - 1),
            _ => (col < 2).then(|| i + 1),
        }
    };
    let mut commands = Vec::new();
    for (dir, name) in labels.iter().enumerate() {
        for i in 0..CELLS {
            if let Some(j) = neighbour(dir, i) {
                commands.push(Command {
                    label: dir,
                    name: format!("{name}_from_{i}"),
                    guard: vec![Atom::new(i, Op::Eq, 0)],
                    update: vec![(i, Rhs::Shift(j, 0)), (j, Rhs::Const(0))],
                });
            }
        }
    }
    let inputs = (0..CELLS).map(|c| Input { terms: vec![(c, 1)], divisor: 8 }).collect();
    let goal = (0..CELLS).map(|c| Atom::new(c, Op::Eq, ((c + 1) % CELLS) as i64)).collect();
    Domain { vars, labels, commands, inputs, goal, stop_label: 1 }
}

/// Locations of the Transport road, 0..LOCATIONS-1 on a line.
pub const LOCATIONS: i64 = 5;
/// The bridge: the middle location.
pub const BRIDGE: i64 = 2;
/// The packages' destinations (package p goes to `DESTINATIONS[p - 1]`).
pub const DESTINATIONS: [i64; 3] = [4, 0, 3];
/// How many packages the truck holds.
pub const CAPACITY: i64 = 2;
/// The value of a package's location while it is in the truck.
pub const IN_TRUCK: i64 = LOCATIONS;

/// Transport: a truck on the road 0 - 1 - 2 - 3 - 4 (`truck`), three packages (`pP` in [0, 5], 5 =
/// in the truck), `load` in [0, 2] the number of packages in the truck (kept by the updates, the
/// capacity its domain and the load guard). Labels `drive_left`, `drive_right`, `load_P` (the
/// package is where the truck is, the truck has room), `unload_P` (the package is in the truck;
/// it is left where the truck is). The goal: every package at its destination; its stop label
/// `unload_1` (nothing is in the truck there).
pub fn transport() -> Domain {
    let packages = DESTINATIONS.len();
    let mut vars = vec![Var { name: "truck".into(), lo: 0, hi: LOCATIONS - 1 }];
    vars.extend((1..=packages).map(|p| Var { name: format!("p{p}"), lo: 0, hi: IN_TRUCK }));
    vars.push(Var { name: "load".into(), lo: 0, hi: CAPACITY });
    let (truck, load) = (0, packages + 1);
    let mut labels: Vec<String> = vec!["drive_left".into(), "drive_right".into()];
    labels.extend((1..=packages).map(|p| format!("load_{p}")));
    labels.extend((1..=packages).map(|p| format!("unload_{p}")));
    let mut commands = vec![
        Command {
            label: 0,
            name: "drive_left".into(),
            guard: vec![Atom::new(truck, Op::Ge, 1)],
            update: vec![(truck, Rhs::Shift(truck, -1))],
        },
        Command {
            label: 1,
            name: "drive_right".into(),
            guard: vec![Atom::new(truck, Op::Le, LOCATIONS - 2)],
            update: vec![(truck, Rhs::Shift(truck, 1))],
        },
    ];
    for p in 1..=packages {
        commands.push(Command {
            label: 1 + p,
            name: format!("load_{p}"),
            guard: vec![Atom { var: p, op: Op::Eq, rhs: Term::Var(truck) }, Atom::new(load, Op::Le, CAPACITY - 1)],
            update: vec![(p, Rhs::Const(IN_TRUCK)), (load, Rhs::Shift(load, 1))],
        });
    }
    for p in 1..=packages {
        commands.push(Command {
            label: 1 + packages + p,
            name: format!("unload_{p}"),
            guard: vec![Atom::new(p, Op::Eq, IN_TRUCK)],
            update: vec![(p, Rhs::Shift(truck, 0)), (load, Rhs::Shift(load, -1))],
        });
    }
    let mut inputs = vec![Input { terms: vec![(truck, 1)], divisor: LOCATIONS - 1 }];
    inputs.extend((1..=packages).map(|p| Input { terms: vec![(p, 1)], divisor: IN_TRUCK }));
    inputs.extend((1..=packages).map(|p| Input { terms: vec![(p, 1), (truck, -1)], divisor: IN_TRUCK }));
    inputs.push(Input { terms: vec![(load, 1)], divisor: CAPACITY });
    let goal = (1..=packages).map(|p| Atom::new(p, Op::Eq, DESTINATIONS[p - 1])).collect();
    Domain { vars, labels, commands, inputs, goal, stop_label: 2 + packages }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::Space;

    fn goal_state(d: &Domain) -> Vec<i64> {
        d.goal.iter().fold(vec![0; d.vars.len()], |mut s, a| {
            if let Term::Const(k) = a.rhs {
                s[a.var] = k;
            }
            s
        })
    }

    #[test]
    fn blocksworld_has_the_known_number_of_states() {
        // Labelled forests of ordered stacks: 13, 73 and 501 states for 3, 4 and 5 blocks.
        for (n, count, diameter) in [(3, 13, 4), (4, 73, 6), (5, 501, 8)] {
            let d = blocks(n);
            let g = goal_state(&d);
            assert!(d.is_goal(&g));
            assert!(d.successors(&g).iter().all(|(l, _, _)| *l != d.stop_label));
            let space = Space::explore(&d, &[g], 10_000).unwrap();
            assert_eq!(space.states.len(), count);
            // The table counter is the number of blocks on the table in every state.
            for s in &space.states {
                assert_eq!(s[n], s[..n].iter().filter(|&&x| x == 0).count() as i64);
            }
            assert_eq!(space.dist.iter().map(|d| d.unwrap()).max(), Some(diameter));
        }
    }

    #[test]
    fn the_expert_moves_one_step_closer() {
        let d = blocks(3);
        // 3 on 1, 1 and 2 on the table: 3 to the table, 2 onto 3, 1 onto 2.
        let s = vec![0, 0, 1, 2];
        let space = Space::explore(&d, std::slice::from_ref(&s), 100).unwrap();
        let i = space.index[&s];
        assert_eq!(space.dist[i], Some(3));
        assert_eq!(d.labels[space.expert(&d, i)], "move_3_to_table");
        let goal = space.index[&goal_state(&d)];
        assert_eq!(space.expert(&d, goal), d.stop_label);
    }

    #[test]
    fn the_eight_puzzle_has_half_of_the_permutations() {
        let d = puzzle8();
        let g = goal_state(&d);
        assert_eq!(g, vec![1, 2, 3, 4, 5, 6, 7, 8, 0]);
        assert!(d.successors(&g).iter().all(|(l, _, _)| *l != d.stop_label));
        let space = Space::explore(&d, &[g], 200_000).unwrap();
        assert_eq!(space.states.len(), 181_440);
        assert_eq!(space.dist.iter().map(|d| d.unwrap()).max(), Some(31));
    }

    #[test]
    fn transport_keeps_the_load_and_the_capacity() {
        let d = transport();
        let g = vec![0, 4, 0, 3, 0];
        assert!(d.is_goal(&g));
        let space = Space::explore(&d, &[g], 10_000).unwrap();
        // Truck anywhere, packages anywhere or in the truck, at most two in it.
        assert_eq!(space.states.len(), 5 * (6 * 6 * 6 - 1));
        for s in &space.states {
            assert_eq!(s[4], s[1..4].iter().filter(|&&p| p == IN_TRUCK).count() as i64);
        }
        assert!(
            space.states.iter().all(|s| !d.is_goal(s) || d.successors(s).iter().all(|(l, _, _)| *l != d.stop_label))
        );
    }
}
