//! The sandbox's listener: TCP connections a handler can cut without an
//! answer (an outage's "cut", an ambiguous call's lost reply), and an
//! accept loop that outlives a shortage of file descriptors.

use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::extract::connect_info::Connected;
use axum::serve::IncomingStream;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};

/// Pause after an accept error that is not about one connection (such as
/// running out of file descriptors), so the loop does not spin while
/// closing connections free some.
const ACCEPT_ERROR_PAUSE: Duration = Duration::from_millis(100);

/// Lets a handler cut its own connection: once cut, every read and write
/// on it fails, so hyper drops it without sending a byte of the answer.
#[derive(Debug, Clone)]
pub(crate) struct ConnHandle(Arc<AtomicBool>);

impl ConnHandle {
    pub(super) fn cut(&self) {
        self.0.store(true, Ordering::Release);
    }
}

impl Connected<IncomingStream<'_, SandboxListener>> for ConnHandle {
    fn connect_info(stream: IncomingStream<'_, SandboxListener>) -> Self {
        ConnHandle(stream.io().cut.clone())
    }
}

/// A TCP stream the sandbox can cut from inside a handler.
pub(crate) struct CuttableStream {
    inner: TcpStream,
    cut: Arc<AtomicBool>,
}

impl CuttableStream {
    fn is_cut(&self) -> bool {
        self.cut.load(Ordering::Acquire)
    }
}

fn cut_error() -> io::Error {
    io::Error::new(
        io::ErrorKind::ConnectionAborted,
        "connection cut by sandbox fault",
    )
}

impl AsyncRead for CuttableStream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if self.is_cut() {
            return Poll::Ready(Err(cut_error()));
        }
        Pin::new(&mut self.get_mut().inner).poll_read(cx, buf)
    }
}

impl AsyncWrite for CuttableStream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        if self.is_cut() {
            return Poll::Ready(Err(cut_error()));
        }
        Pin::new(&mut self.get_mut().inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        if self.is_cut() {
            return Poll::Ready(Err(cut_error()));
        }
        Pin::new(&mut self.get_mut().inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        if self.is_cut() {
            return Poll::Ready(Err(cut_error()));
        }
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}

/// The TCP listener behind `serve`, handing out cuttable streams.
pub(crate) struct SandboxListener(pub(crate) TcpListener);

impl axum::serve::Listener for SandboxListener {
    type Io = CuttableStream;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        loop {
            match self.0.accept().await {
                Ok((stream, addr)) => {
                    // Small answers should leave at once, not wait for Nagle.
                    let _ = stream.set_nodelay(true);
                    let io = CuttableStream {
                        inner: stream,
                        cut: Arc::new(AtomicBool::new(false)),
                    };
                    return (io, addr);
                }
                Err(e) => {
                    let per_connection = matches!(
                        e.kind(),
                        io::ErrorKind::ConnectionRefused
                            | io::ErrorKind::ConnectionAborted
                            | io::ErrorKind::ConnectionReset
                    );
                    if !per_connection {
                        tracing::error!("sandbox: accept failed: {e}");
                        tokio::time::sleep(ACCEPT_ERROR_PAUSE).await;
                    }
                }
            }
        }
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        self.0.local_addr()
    }
}
