//! `cargo run -p pay-embed-example`: creates and pays a link in memory and prints what happened.

fn main() {
    let host = pay_embed_example::build(1_795_327_640_000);
    match pay_embed_example::create_and_pay(&host) {
        Ok(outcome) => println!("{outcome:#?}"),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    }
}
