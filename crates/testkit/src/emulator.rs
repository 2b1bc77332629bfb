//! The real emulator on a loopback port, for blocking tests.

/// The emulator on `127.0.0.1`, served by a runtime of its own (dropped with it).
pub struct Emulator {
    pub server: monform_emulator::Server,
    runtime: tokio::runtime::Runtime,
}

impl Emulator {
    /// Rate limiting off: tests make requests much faster than users do.
    pub fn start() -> Emulator {
        Emulator::with(monform_emulator::Config {
            rate_limit: None,
            ..Default::default()
        })
    }

    pub fn with(config: monform_emulator::Config) -> Emulator {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("runtime");
        let server = runtime
            .block_on(monform_emulator::start_local(config))
            .expect("emulator starts");
        Emulator { server, runtime }
    }

    pub fn url(&self) -> String {
        self.server.url()
    }

    /// A direct API call with the development key, for changes "behind
    /// monform's back"; asserts success and returns the JSON body (`null`
    /// when there is none).
    pub fn call(&self, method: &str, path: &str, body: Option<serde_json::Value>) -> serde_json::Value {
        let client = reqwest::blocking::Client::new();
        let method = reqwest::Method::from_bytes(method.as_bytes()).expect("method");
        let mut request = client
            .request(method, format!("{}{path}", self.server.url()))
            .bearer_auth(&self.server.api_key);
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request.send().expect("request sent");
        let status = response.status();
        let text = response.text().unwrap_or_default();
        assert!(status.is_success(), "{path}: {status}: {text}");
        serde_json::from_str(&text).unwrap_or(serde_json::Value::Null)
    }

    pub fn block_on<F: std::future::Future>(&self, future: F) -> F::Output {
        self.runtime.block_on(future)
    }
}
