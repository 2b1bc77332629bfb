use super::*;
use crate::ops::{Trusted, revoke_trust, trust_project, trusted_projects};

struct Fixture {
    root: tempfile::TempDir,
    user: tempfile::TempDir,
}

impl Fixture {
    fn new(toml: &str) -> Fixture {
        let root = tempfile::tempdir().unwrap();
        std::fs::write(root.path().join("monform.toml"), toml).unwrap();
        Fixture {
            root,
            user: tempfile::tempdir().unwrap(),
        }
    }

    fn choose(
        &self,
        flag: Option<&str>,
        env: Option<&str>,
        project: Option<&ProjectUrl>,
    ) -> Result<Access, AccessRefusal> {
        choose_api(&AccessRequest {
            root: self.root.path(),
            flag,
            env_url: env,
            project_url: project,
            user_dir: Some(self.user.path()),
        })
    }
}

const TOML: &str = "[project]\nname = \"p\"\n\n[api]\nurl = \"https://attacker.example\"\n";

fn in_file(url: &str) -> ProjectUrl {
    // The span of the value on line 5 of TOML.
    ProjectUrl {
        url: url.into(),
        span: Some(Span::new(0, TOML.find("url =").unwrap() + 6, 26)),
    }
}

#[test]
fn the_project_s_url_is_refused_until_trusted_naming_its_line() {
    let f = Fixture::new(TOML);
    let project = in_file("https://attacker.example");
    let refused = f.choose(None, None, Some(&project)).unwrap_err();
    let AccessRefusal::Untrusted { url, from } = &refused else {
        panic!("{refused:?}")
    };
    assert_eq!(url, "https://attacker.example");
    assert_eq!(
        *from,
        UrlSource::Project {
            file: f.root.path().join("monform.toml"),
            line: Some(5)
        }
    );
    let Trusted::Recorded { already: false, .. } =
        trust_project(f.user.path(), f.root.path(), "https://attacker.example").unwrap()
    else {
        panic!("not recorded")
    };
    let access = f.choose(None, None, Some(&project)).unwrap();
    assert_eq!(access.chosen, Chosen::Trusted(f.user.path().join("trusted.toml")));
    // Another URL in the same folder asks again; the same URL elsewhere too.
    assert!(matches!(
        f.choose(None, None, Some(&in_file("https://other.example"))),
        Err(AccessRefusal::Untrusted { .. })
    ));
    let elsewhere = Fixture {
        root: tempfile::tempdir().unwrap(),
        user: f.user,
    };
    std::fs::write(elsewhere.root.path().join("monform.toml"), TOML).unwrap();
    assert!(matches!(
        elsewhere.choose(None, None, Some(&project)),
        Err(AccessRefusal::Untrusted { .. })
    ));
    let removed = revoke_trust(elsewhere.user.path(), f.root.path()).unwrap();
    assert_eq!(removed.len(), 1);
    assert!(trusted_projects(elsewhere.user.path()).unwrap().is_empty());
}

#[test]
fn the_user_s_choices_need_no_trust() {
    let f = Fixture::new(TOML);
    let project = in_file("https://attacker.example");
    let flag = f
        .choose(
            Some("https://mine.example"),
            Some("https://env.example"),
            Some(&project),
        )
        .unwrap();
    assert_eq!(
        (flag.url.as_str(), flag.source),
        ("https://mine.example", UrlSource::Flag)
    );
    let env = f.choose(None, Some("https://env.example"), Some(&project)).unwrap();
    assert_eq!(env.source, UrlSource::Environment);
    assert!(f.choose(None, None, Some(&in_file("local"))).unwrap().is_local());
    // The user's config.toml: its URL alone, or the project naming it.
    std::fs::write(
        f.user.path().join("config.toml"),
        "[api]\nurl = \"https://attacker.example/\"\n",
    )
    .unwrap();
    let same = f.choose(None, None, Some(&project)).unwrap();
    assert_eq!(same.chosen, Chosen::SameAsUserConfig(f.user.path().join("config.toml")));
    let alone = f.choose(None, None, None).unwrap();
    assert_eq!(alone.source, UrlSource::UserConfig(f.user.path().join("config.toml")));
}

#[test]
fn plain_http_goes_only_to_this_machine_whoever_chose_it() {
    let f = Fixture::new(TOML);
    for (flag, env, project) in [
        (Some("http://10.1.2.3:8080"), None, None),
        (None, Some("http://ci-runner:8080"), None),
        (None, None, Some(in_file("http://attacker.example"))),
    ] {
        let refused = f.choose(flag, env, project.as_ref()).unwrap_err();
        assert!(matches!(refused, AccessRefusal::Unfit { .. }), "{refused:?}");
        assert!(refused.to_string().contains("plain http://"), "{refused}");
    }
    assert!(trust_project(f.user.path(), f.root.path(), "http://attacker.example").is_err());
    assert!(f.choose(None, Some("http://127.0.0.1:8080"), None).is_ok());
}

#[test]
fn a_broken_user_file_is_an_error_naming_it() {
    let f = Fixture::new(TOML);
    std::fs::write(f.user.path().join("trusted.toml"), "[[trusted]]\npath = 3\n").unwrap();
    let refused = f
        .choose(None, None, Some(&in_file("https://attacker.example")))
        .unwrap_err();
    assert!(refused.to_string().contains("trusted.toml"), "{refused}");
    assert!(matches!(f.choose(None, None, None), Err(AccessRefusal::NoUrl)));
}

#[test]
fn the_user_folder_follows_xdg() {
    let env = |pairs: &'static [(&'static str, &'static str)]| {
        move |name: &str| pairs.iter().find(|(n, _)| *n == name).map(|(_, v)| v.to_string())
    };
    let dir = |pairs| user_config_dir(&env(pairs));
    assert_eq!(
        dir(&[("XDG_CONFIG_HOME", "/x"), ("HOME", "/h")]),
        Some("/x/monform".into())
    );
    assert_eq!(
        dir(&[("XDG_CONFIG_HOME", "rel"), ("HOME", "/h")]),
        Some("/h/.config/monform".into())
    );
    assert_eq!(dir(&[("HOME", "/h")]), Some("/h/.config/monform".into()));
    assert_eq!(dir(&[]), None);
}
