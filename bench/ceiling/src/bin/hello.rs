//! The hello-world ceiling: a minimal actix-web JSON handler with the same worker count as
//! pay-server. `hello <addr> <workers>`.

use actix_web::{get, App, HttpResponse, HttpServer};

#[get("/hello")]
async fn hello() -> HttpResponse {
    HttpResponse::Ok().json(serde_json::json!({"hello": "world"}))
}

fn main() -> std::io::Result<()> {
    let mut args = std::env::args().skip(1);
    let addr = args.next().unwrap_or_else(|| "127.0.0.1:18081".into());
    let workers: usize = args.next().and_then(|w| w.parse().ok()).unwrap_or(2);
    actix_rt::System::new().block_on(async move {
        HttpServer::new(|| App::new().service(hello))
            .workers(workers)
            .bind(addr)?
            .run()
            .await
    })
}
