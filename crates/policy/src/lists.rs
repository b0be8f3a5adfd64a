//! The allow-lists handlers consult, by name. Their items live in the spec files
//! (`[[list]]` entries with `match`/`not_match` examples, checked at load like a command's);
//! this table is the set of names a spec may define. An allow-list a spec set leaves out is
//! empty, which only makes the classifier ask more.

macro_rules! lists {
    ($($variant:ident $name:literal;)*) => {
        /// A named allow-list (`[[list]] name = "…"` in a spec file).
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub(crate) enum List {
            $($variant,)*
        }

        impl List {
            /// Every list, in table order (`List as usize` indexes it).
            pub(crate) const ALL: &'static [List] = &[$(Self::$variant,)*];

            /// The name spec files use.
            pub(crate) fn name(self) -> &'static str {
                match self {
                    $(Self::$variant => $name,)*
                }
            }

            pub(crate) fn from_name(s: &str) -> Option<Self> {
                match s {
                    $($name => Some(Self::$variant),)*
                    _ => None,
                }
            }
        }
    };
}

lists! {
    SshSafeOptions "ssh.safe_options";
    GitSafeConfigPrefixes "git.safe_config_prefixes";
    GitListingOptions "git.listing_options";
    GitConfigReadingOptions "git_config.reading_options";
    ShellSafeOptions "shell.safe_options";
    SudoWithoutCommand "sudo.without_command";
    WritesLogQuietOptions "writes_log.quiet_options";
    GetentDatabases "getent.databases";
    SetSafeNames "set.safe_names";
    MetadataHarmlessPaths "metadata.harmless_paths";
    DockerApiListings "docker_api.listings";
    PartedUnits "parted.units";
    DebugfsReads "debugfs.reads";
    AnsibleReadModules "ansible.read_modules";
    AnsibleNoopOptions "ansible.noop_options";
    MidcltReadVerbs "midclt.read_verbs";
    PhpInfoOptions "php.info_options";
    RedisReadCommands "redis.read_commands";
    SqlPureFunctions "sql.pure_functions";
}

#[cfg(test)]
mod tests {
    use super::List;
    use crate::spec::Policy;

    /// A list name in this table that no built-in spec defines would silently be empty.
    #[test]
    fn every_list_is_defined_by_the_default_specs() {
        let p = Policy::default_unchecked().unwrap_or_else(|e| panic!("default specs: {e}"));
        let defined = p.list_names();
        for l in List::ALL {
            assert!(defined.contains(&l.name()), "{} has no [[list]]", l.name());
            assert_eq!(List::from_name(l.name()), Some(*l));
        }
        assert_eq!(defined.len(), List::ALL.len());
    }

    /// Allow-lists only let things through: without one, each of its examples classifies
    /// the same or stricter, and the read-only ones are no longer read-only.
    #[test]
    fn a_missing_list_only_asks_more() {
        let p = Policy::default_unchecked().unwrap_or_else(|e| panic!("default specs: {e}"));
        for l in List::ALL {
            let (without, examples) = p.without_list(*l);
            assert!(!examples.is_empty(), "{}", l.name());
            let mut stricter = 0;
            for ex in &examples {
                let with = crate::classify_with(&p, ex).class;
                let bare = crate::classify_with(&without, ex).class;
                assert!(bare >= with, "{}: `{ex}` {with} -> {bare}", l.name());
                stricter += usize::from(bare > with);
            }
            assert!(stricter > 0, "{}: no example depends on the list", l.name());
        }
    }
}
