//! List answers filtered to what the caller may see, fetching further pages to fill a short one,
//! with the page token the caller gets back sealed.

use super::body::{MAX_PAGES_WITHOUT_SIZE, RewriteError};
use crate::core::iceberg::list::{self, Entry, ListKind};
use bytes::Bytes;

/// One filtered list response, possibly made of several upstream pages.
#[derive(Debug)]
pub struct Filtered {
    pub body: Vec<u8>,
    pub hidden: usize,
}

/// How one list is read: its kind, the upstream's separators, the caller's `pageSize`, and
/// the refill bound.
#[derive(Clone, Copy, Debug)]
pub struct ListRead<'a> {
    pub kind: ListKind,
    pub separators: &'a [String],
    pub page_size: Option<u32>,
    pub max_pages: usize,
}

/// Filters a list. `first` is the upstream's first page; `fetch(token, size)` asks for the next
/// page; `seal` wraps the upstream token the caller gets back. With `page_size`, pages are
/// fetched until the page is full, the upstream has no more, or `max_pages` were read; the
/// follow-up asks only for what is missing, so no visible entry is skipped. Without it, every
/// page is followed.
pub async fn filter_list<F, Fut>(
    read: ListRead<'_>,
    first: Bytes,
    mut visible: impl FnMut(&Entry) -> bool,
    mut fetch: F,
    seal: impl Fn(&str) -> Option<String>,
) -> Result<Filtered, RewriteError>
where
    F: FnMut(String, Option<u32>) -> Fut,
    Fut: std::future::Future<Output = Result<(u16, Bytes), RewriteError>>,
{
    let ListRead { kind, separators, page_size, max_pages } = read;
    let mut page = list::filter(kind, first, separators, &mut visible)?;
    let limit = if page_size.is_some() { max_pages } else { MAX_PAGES_WITHOUT_SIZE };
    let mut pages = 1;
    loop {
        let missing = page_size.map(|n| (n as usize).saturating_sub(page.len()));
        let Some(token) = page.next_page_token().map(str::to_owned) else { break };
        if missing == Some(0) || pages >= limit {
            break;
        }
        let (status, bytes) = fetch(token, missing.and_then(|m| u32::try_from(m).ok())).await?;
        if status != 200 {
            return Err(RewriteError::FollowUp(status));
        }
        page.append(list::filter(kind, bytes, separators, &mut visible)?);
        pages += 1;
    }
    // a token that cannot be sealed is an error: dropped, it would end the caller's list early
    let next = page.next_page_token().map(|token| seal(token).ok_or(RewriteError::Seal)).transpose()?;
    let body = page.render(kind, next.as_deref());
    let hidden = page.hidden();
    Ok(Filtered { body, hidden })
}
