use std::path::Path;

use super::super::*;
use crate::source::floor_char_boundary;

/// The tree of `text` by the fast scanner (`None` when it gives up) and
/// by yaml-rust2 alone.
fn both(text: &str) -> (Option<Node>, Result<Node, SyntaxError>) {
    let budget = Budget::default();
    let fast = Builder::new(0, text, 0, text.len(), &budget).run_fast();
    let slow = Builder::new(0, text, 0, text.len(), &budget).run();
    (fast, slow)
}

/// Whether the fast scanner took `text`; panics when its tree is not
/// yaml-rust2's, spans included.
fn same(text: &str) -> bool {
    let (fast, slow) = both(text);
    match (fast, slow) {
        (None, _) => false,
        // yaml-rust2 counts some characters after a non-ASCII one in a
        // literal block twice (its marks, and the spans from them, come a
        // byte late): only the values can be compared.
        (Some(fast), Ok(slow)) if !text.is_ascii() => {
            assert_eq!(fast.to_json(), slow.to_json(), "the values of {text:?} differ");
            true
        }
        (Some(fast), Ok(slow)) => {
            if fast != slow {
                let (fast, slow) = (format!("{fast:?}"), format!("{slow:?}"));
                let at = fast.bytes().zip(slow.bytes()).take_while(|(a, b)| a == b).count();
                let from = at.saturating_sub(150);
                panic!(
                    "the trees of {text:?} differ:\nfast: …{}\nslow: …{}",
                    &fast[from..(at + 100).min(fast.len())],
                    &slow[from..(at + 100).min(slow.len())]
                );
            }
            true
        }
        (Some(fast), Err(error)) => panic!("{text:?}: fast gave {fast:?}, yaml-rust2 {error:?}"),
    }
}

const SAMPLES: &[&str] = &[
    "a: 1\n",
    "# head\na: 1 # one\nb:   two  \n\nc:\n",
    "checks:\n  api:\n    name: My API\n    tags:\n    - prod\n    - team:core\n    request:\n      url: https://x.example/a?b=c#frag\n",
    "a:\n  - x\n  - y: 1\n    z: 2\n  - 'it''s'\n  - \"q\\\"uote\\n\"\nb: end\n",
    "a:\n- k: v\n  l:\n  - 1\n  - 2\nb: |\n  line one\n\n  line: three # not a comment\nc: |-\n  strip\nd: |+\n  keep\n\ne: x\n",
    "script: |\n    const a = 1;\n      indented();\n\n\n    done();\n\n\nnext: 2\n",
    "a: \"\"\nb: ''\nc: ~\nd: null\ne: true\nf: -1\ng: 0x10\nh: 1.5\ni: a:b\nj: a#b\nk: 'a # b'\n",
    "deep:\n  a:\n    b:\n      c:\n        - d: e\n          f:\n            - g\n",
    "unicode: héllo wörld ✓\nkey with spaces: value with  spaces\n",
    "a: [1, 'two', \"three\", x:y, https://a.example/b]\nb: { k: v, l: [ ], m: {}, n: [a, {o: p}], }\nc: []\n",
    "a: 1\n  # indented comment\nb: 2\n",
    "a: &x 1\nb: *x\n",
    "a: >\n  folded\n",
    "a: b\n c\n",
    "a: 1\na: 2\n",
    "- a\n- b\n",
    "a: 1\n---\nb: 2\n",
    "a: |\n\n  late\n",
    "a:\n  b: 1\n c: 2\n",
    "a: |\n  x\n# trailing\nb: 1\n",
    "a: b: c\n",
    "a: 'open\n",
    "a: \"\\u00e9\"\n",
    "<<: {a: 1}\n",
    "a:\n  -\n  - x\n",
    "list:\n- - nested\n",
    "a: { k: x -}\n",
    "a: x # c\n  b: 1\n",
];

#[test]
fn same_trees_as_yaml_rust2_on_samples() {
    let taken = SAMPLES.iter().filter(|text| same(text)).count();
    // The first eleven are in the subset; the rest are left to yaml-rust2.
    assert_eq!(taken, 11, "samples the fast scanner took");
}

/// Every YAML file of the repository (examples, fixtures, schemas).
fn repository_yaml() -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    walkdir::WalkDir::new(&root)
        .into_iter()
        .filter_entry(|e| !matches!(e.file_name().to_str(), Some("target" | ".git" | "node_modules")))
        .flatten()
        .filter(|e| matches!(e.path().extension().and_then(|x| x.to_str()), Some("yaml" | "yml")))
        .filter_map(|e| std::fs::read_to_string(e.path()).ok())
        .collect()
}

#[test]
fn same_trees_as_yaml_rust2_on_the_repositorys_files() {
    let files = repository_yaml();
    let taken = files.iter().filter(|text| same(text)).count();
    assert!(
        files.len() >= 10 && taken * 2 > files.len(),
        "took {taken} of {} files",
        files.len()
    );
}

/// A small deterministic generator (xorshift), so a failure repeats.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Pieces that change what YAML means where they land.
const PIECES: &[&str] = &[
    " ", "  ", "\n", ":", ": ", "-", "- ", "#", " #", "|", "|-", "\"", "'", "x", "1", "\n  ", "\n- ", "~", "é", "''",
    "\\", "\\n", "[", "{", "&a", "*a", "!", "---", "\n\n", "k: v\n",
];

/// Small edits of each sample and file, each compared where the fast
/// scanner takes it.
#[test]
fn same_trees_as_yaml_rust2_after_random_edits() {
    let mut corpus: Vec<String> = SAMPLES.iter().map(|s| s.to_string()).collect();
    corpus.extend(repository_yaml().into_iter().filter(|t| t.len() < 4_000));
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut taken = 0;
    let mut tried = 0;
    for text in &corpus {
        for _ in 0..1_000 {
            let mut edited = text.clone();
            for _ in 0..1 + rng.below(3) {
                let at = floor_char_boundary(&edited, rng.below(edited.len() + 1));
                if rng.below(3) == 0 {
                    let end = floor_char_boundary(&edited, (at + 1 + rng.below(3)).min(edited.len()));
                    edited.replace_range(at..end, "");
                } else {
                    edited.insert_str(at, PIECES[rng.below(PIECES.len())]);
                }
            }
            tried += 1;
            if same(&edited) {
                taken += 1;
            }
        }
    }
    // Enough edits stay in the subset for the comparison to mean something.
    assert!(taken * 5 > tried, "took {taken} of {tried}");
}

/// Random documents of the subset's shapes (and a few outside it): maps
/// and lists nested at random indentations, every scalar style, flow
/// collections, literal blocks, comments and blank lines.
#[test]
fn same_trees_as_yaml_rust2_on_generated_documents() {
    fn scalar(rng: &mut Rng) -> String {
        const WORDS: &[&str] = &[
            "x",
            "a b",
            "1",
            "-2",
            "-.5",
            "-x",
            "0x1F",
            "1.5",
            "true",
            "no",
            "null",
            "~",
            "a:b",
            "a#b",
            "https://h/p?q#f",
            "é",
            "\"q\"",
            "'s''t'",
            "\"a\\\\b\\n\"",
            "''",
            "\"\"",
            "a  b",
            "{}",
            "[]",
            "[a, 'b', {c: d}]",
            "{ k: v, l: [-1] }",
            "- x",
            "-",
            "[-, -1]",
            "&a x",
            "*a",
            "!!str 1",
            "> f",
            "'multi",
            "x # c",
        ];
        // Mostly within the subset (the first 27).
        let from = if rng.below(4) == 0 { WORDS.len() } else { 27 };
        WORDS[rng.below(from)].to_owned()
    }
    fn key(rng: &mut Rng) -> String {
        const KEYS: &[&str] = &[
            "a", "b c", "d-e", "f_g", "h.i", "$j", "/k", "10", "l", "m", "n", "o p", "<<", "\"q\"", "r ",
        ];
        // Mostly distinct: a duplicate key is an error, left to yaml-rust2.
        match rng.below(4) {
            0 => KEYS[rng.below(KEYS.len())].to_owned(),
            _ => format!("{}{}", KEYS[rng.below(KEYS.len())], rng.below(1_000)),
        }
    }
    fn block(rng: &mut Rng, indent: usize) -> String {
        let pad = " ".repeat(indent + 1 + rng.below(3));
        let lines = 1 + rng.below(3);
        let mut text = String::from(["|", "|-", "|+", "| ", "|", "|"][rng.below(6)]);
        text.push('\n');
        for _ in 0..lines {
            text.push_str(&pad);
            text.push_str(["code();", "  more: x # y", "", "é"][rng.below(4)]);
            text.push('\n');
        }
        if rng.below(3) == 0 {
            text.push('\n');
        }
        text
    }
    /// A collection in column `indent`, whose first line starts after `lead`.
    fn collection(rng: &mut Rng, indent: usize, depth: usize, out: &mut String) {
        // A file's root is a map.
        let list = depth > 0 && rng.below(3) == 0;
        for n in 0..1 + rng.below(4) {
            if n > 0 || rng.below(4) == 0 {
                out.push_str(&" ".repeat(indent));
            }
            if rng.below(8) == 0 {
                out.push_str("# note\n");
                out.push_str(&" ".repeat(indent));
            }
            if list {
                out.push_str("- ");
            } else {
                out.push_str(&key(rng));
                out.push(':');
            }
            match rng.below(if depth > 3 { 3 } else { 5 }) {
                0 if !list => {
                    out.push('\n');
                    let inner = if rng.below(2) == 0 {
                        indent
                    } else {
                        indent + 1 + rng.below(3)
                    };
                    out.push_str(&" ".repeat(inner));
                    out.push_str("- ");
                    out.push_str(&scalar(rng));
                    out.push('\n');
                }
                1 => {
                    out.push_str(if list { "" } else { " " });
                    out.push_str(&block(rng, indent));
                }
                2 | 3 if list => {
                    let column = indent + 2;
                    out.push_str(&key(rng));
                    out.push_str(": ");
                    out.push_str(&scalar(rng));
                    out.push('\n');
                    if rng.below(2) == 0 {
                        collection(rng, column, depth + 1, out);
                    }
                }
                2 | 3 => {
                    out.push('\n');
                    let inner = indent + 1 + rng.below(3);
                    out.push_str(&" ".repeat(inner));
                    collection(rng, inner, depth + 1, out);
                }
                _ => {
                    out.push_str(if list { "" } else { " " });
                    out.push_str(&scalar(rng));
                    out.push('\n');
                }
            }
            if rng.below(10) == 0 {
                out.push('\n');
            }
        }
    }
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let (mut taken, tries) = (0, 50_000);
    for _ in 0..tries {
        let mut text = String::new();
        collection(&mut rng, 0, 0, &mut text);
        if same(&text) {
            taken += 1;
        }
    }
    assert!(taken * 8 > tries, "took {taken} of {tries}");
}
