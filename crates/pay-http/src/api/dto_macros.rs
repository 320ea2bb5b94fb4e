//! What the resources' DTOs share.

/// A list response: `{"data": [...]}`.
macro_rules! data_list {
    ($name:ident, $item:ty, $doc:expr) => {
        #[doc = $doc]
        #[derive(Debug, Serialize, ToSchema)]
        pub struct $name {
            pub data: Vec<$item>,
        }
    };
}
