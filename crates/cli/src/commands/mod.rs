pub mod apply;
pub mod context;
pub mod plan;
pub mod schema;
pub mod serve;
pub mod state;
pub mod validate;
