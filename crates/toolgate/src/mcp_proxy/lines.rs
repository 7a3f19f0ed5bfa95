//! Newline-delimited messages with a size limit: a peer that never sends a
//! newline cannot make the proxy buffer without end.

use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};

/// Reads lines of at most `max` bytes.
pub(super) struct LineReader<R> {
    inner: BufReader<R>,
    max: usize,
}

impl<R: AsyncRead + Unpin> LineReader<R> {
    /// Lines from `reader`, each at most `max` bytes.
    pub(super) fn new(reader: R, max: usize) -> Self {
        LineReader {
            inner: BufReader::with_capacity(64 * 1024, reader),
            max,
        }
    }

    /// The next non-blank line without its line ending: `Ok(Some(Ok(line)))`;
    /// `Ok(Some(Err(len)))` for a line over the limit (skipped whole);
    /// `Ok(None)` at the end of input.
    pub(super) async fn next(&mut self) -> std::io::Result<Option<Result<Vec<u8>, usize>>> {
        loop {
            let mut line = Vec::new();
            let mut len = 0usize;
            let mut over = false;
            loop {
                let buf = self.inner.fill_buf().await?;
                if buf.is_empty() {
                    if len == 0 {
                        return Ok(None);
                    }
                    break;
                }
                let (take, done) = match buf.iter().position(|&b| b == b'\n') {
                    Some(i) => (i + 1, true),
                    None => (buf.len(), false),
                };
                len += take;
                if !over {
                    if len > self.max + 1 {
                        over = true;
                        line = Vec::new();
                    } else {
                        line.extend_from_slice(&buf[..take]);
                    }
                }
                self.inner.consume(take);
                if done {
                    break;
                }
            }
            if over {
                return Ok(Some(Err(len)));
            }
            while matches!(line.last(), Some(b'\n' | b'\r')) {
                line.pop();
            }
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            return Ok(Some(Ok(line)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn all(input: &[u8], max: usize) -> Vec<Result<Vec<u8>, usize>> {
        let mut r = LineReader::new(input, max);
        let mut out = Vec::new();
        while let Some(l) = r.next().await.unwrap() {
            out.push(l);
        }
        out
    }

    #[tokio::test]
    async fn lines_blank_lines_and_crlf() {
        let got = all(b"a\r\n\n  \nbc\nlast", 10).await;
        assert_eq!(
            got,
            vec![Ok(b"a".to_vec()), Ok(b"bc".to_vec()), Ok(b"last".to_vec())]
        );
    }

    #[tokio::test]
    async fn long_lines_are_skipped_whole() {
        let mut input = vec![b'x'; 100];
        input.extend_from_slice(b"\nok\n");
        let got = all(&input, 10).await;
        assert_eq!(got, vec![Err(101), Ok(b"ok".to_vec())]);
    }
}
