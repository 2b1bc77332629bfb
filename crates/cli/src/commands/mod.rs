pub mod schema;
pub mod serve;
pub mod validate;
