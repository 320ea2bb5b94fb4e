//! The hello-world ceiling: a minimal actix-web JSON handler with the same worker count as
//! pay-server. `hello <addr> <workers> [body bytes]`.
//!
//! `/hello` answers a tiny JSON object. `/body` answers a JSON body of about `body bytes`
//! (made once at start and shared, so a request costs only its HTTP exchange): the ceiling of
//! sending a response the size of the link list's.

use actix_web::{get, web, App, HttpResponse, HttpServer};

#[get("/hello")]
async fn hello() -> HttpResponse {
    HttpResponse::Ok().json(serde_json::json!({"hello": "world"}))
}

#[get("/body")]
async fn body(bytes: web::Data<web::Bytes>) -> HttpResponse {
    HttpResponse::Ok()
        .content_type("application/json")
        .body(bytes.get_ref().clone())
}

fn main() -> std::io::Result<()> {
    let mut args = std::env::args().skip(1);
    let addr = args.next().unwrap_or_else(|| "127.0.0.1:18081".into());
    let workers: usize = args.next().and_then(|w| w.parse().ok()).unwrap_or(2);
    let size: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(0);
    let bytes = web::Data::new(web::Bytes::from(
        serde_json::json!({ "data": "x".repeat(size.saturating_sub(11)) }).to_string(),
    ));
    actix_rt::System::new().block_on(async move {
        HttpServer::new(move || {
            App::new()
                .app_data(bytes.clone())
                .service(hello)
                .service(body)
        })
        .workers(workers)
        .bind(addr)?
        .run()
        .await
    })
}
