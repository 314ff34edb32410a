//! The `sna` command. Only a skeleton so far: the subcommands arrive with the runtime adapters.

const USAGE: &str = "usage: sna <command> [args]

commands (arriving with the runtime adapters):
  import PATH...       import Claude Code, Codex and OpenCode history
  ls                   list sessions
  show ID              print a session as a timeline
  export ID --to RT    convert a session to a runtime's native shape
  resume ID --in RT    prepare a resume in a runtime

options:
  -h, --help           print this help
  -V, --version        print the version";

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        None | Some("-h") | Some("--help") | Some("help") => println!("{USAGE}"),
        Some("-V") | Some("--version") => println!("sna {}", env!("CARGO_PKG_VERSION")),
        Some(command @ ("import" | "ls" | "show" | "export" | "convert" | "resume" | "report" | "rm" | "view")) => {
            eprintln!("sna: `{command}` is not implemented yet");
            std::process::exit(1);
        }
        Some(other) => {
            eprintln!("sna: unknown command {other:?}\n\n{USAGE}");
            std::process::exit(2);
        }
    }
}
