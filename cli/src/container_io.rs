//! ATOMEF containers in the CLI: every command reads the bare blob inside
//! one (after checking its CRCs) and takes its dimensions from the header.
use crate::read_blob;
use atome::container;
use atome::format::Dims;
use std::path::Path;

/// An ATOMEF container's header, kept beside the bare blob it held.
pub struct Boxed {
    pub info: container::Info,
    pub metadata: String,
    pub file_len: usize,
}

/// A file's bare blob, and its container header when it was an ATOMEF
/// container (checked: both CRCs; a damaged file is an error).
pub fn read_model(path: &Path) -> Result<(String, Vec<u8>, Option<Boxed>), String> {
    let (name, b) = read_blob(path)?;
    if !container::is_container(&b) {
        return Ok((name, b, None));
    }
    let c = container::parse(&b).map_err(|e| format!("{name}: ATOMEF container refused: {}", why(e)))?;
    let boxed = Boxed { info: c.info, metadata: String::from_utf8_lossy(c.metadata).into_owned(), file_len: b.len() };
    Ok((name, c.payload.to_vec(), Some(boxed)))
}

/// The dimensions to use: --config when given, else the container's.
pub fn config_or(given: Option<Dims>, boxed: &Option<Boxed>) -> Option<Dims> {
    given.or(boxed.as_ref().map(|x| x.info.dims))
}


/// What a container refusal means, in the words of docs/CONTAINER.md.
pub fn why(e: container::ContainerError) -> String {
    use container::ContainerError as E;
    let what = match e {
        E::BadHeader => "the header is not one this library reads, or contradicts itself or its payload's magic",
        E::Truncated => "the file is shorter than its header says",
        E::Trailing => "more than 15 bytes follow the payload",
        E::Corrupted => "a CRC does not match: the bytes changed after they were written",
        E::Mismatch => "the header's dimensions or class count do not describe the payload exactly",
    };
    format!("{e:?}: {what}")
}
