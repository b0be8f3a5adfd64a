//! Command-specific logic the spec data cannot express: wrappers (recursion),
//! embedded programs (sed, awk, sh -c), request methods, modes and neutralisation.
//! One module per domain; `Handler` below is the registry specs name.

mod builtins;
mod common;
mod containers;
mod databases;
mod files;
mod network;
mod programs;
pub(crate) mod registry;
mod remote;
mod system;
mod vcs;
mod wrappers;

use crate::classify::Run;

use self::registry::Handler;
use self::registry::handler_table;

macro_rules! run_of {
    (post, $run:expr) => {
        Run::Post($run)
    };
    (full, $run:expr) => {
        Run::Full($run)
    };
}

macro_rules! define_dispatch {
    ($($variant:ident $name:literal $kind:ident $run:expr;)*) => {
        impl Handler {
            /// The handler's function (an exhaustive match over the registry's rows).
            pub(crate) fn run(self) -> Run {
                match self {
                    $(Self::$variant => run_of!($kind, $run),)*
                }
            }
        }
    };
}

handler_table!(define_dispatch);

#[cfg(test)]
mod tests {
    use super::Handler;
    use crate::classify::Run;
    use crate::spec::{CmdSpec, Policy};

    fn named(c: &CmdSpec, out: &mut Vec<(Handler, bool)>, top: bool) {
        if let Some(h) = c.handler {
            out.push((h, top));
        }
        for s in &c.subs {
            named(s, out, false);
        }
    }

    fn default_handlers() -> Vec<(Handler, bool)> {
        let p = Policy::default_unchecked().unwrap_or_else(|e| panic!("default specs: {e}"));
        let mut out = Vec::new();
        for c in &p.commands {
            named(c, &mut out, true);
        }
        out
    }

    /// A handler no spec names is dead code or a spec that lost its `handler =` line.
    #[test]
    fn every_handler_is_named_by_a_spec() {
        let used = default_handlers();
        let unused: Vec<&str> = Handler::ALL
            .iter()
            .filter(|h| !used.iter().any(|(u, _)| u == *h))
            .map(|h| h.name())
            .collect();
        assert!(unused.is_empty(), "handlers no spec names: {unused:?}");
    }

    #[test]
    fn names_are_unique_and_round_trip() {
        for (i, h) in Handler::ALL.iter().enumerate() {
            assert_eq!(Handler::from_name(h.name()), Some(*h), "{}", h.name());
            assert!(
                Handler::ALL[i + 1..].iter().all(|o| o.name() != h.name()),
                "{} twice",
                h.name()
            );
        }
        for bad in ["", "Sed", "sed ", "git-config", "nope", "run_post"] {
            assert_eq!(Handler::from_name(bad), None, "{bad}");
        }
    }

    /// The dispatch agrees with the declared kind, and full handlers sit only where the
    /// classifier runs them (a top-level command).
    #[test]
    fn kinds_agree_with_dispatch_and_placement() {
        for h in Handler::ALL {
            assert_eq!(h.is_full(), matches!(h.run(), Run::Full(_)), "{}", h.name());
        }
        for (h, top) in default_handlers() {
            assert!(
                top || !h.is_full(),
                "full handler `{}` below the top",
                h.name()
            );
        }
    }
}
