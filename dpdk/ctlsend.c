/* dpdk/ctlsend.c — sendmsg for the PMDs' control thread.
 *
 * DPDK 22.11's memif PMD (server role) accepts a peer in the EAL interrupt
 * thread, registers the new socket's callback, then sends its HELLO; when
 * that send fails (the peer already closed: EPIPE) its error path closes the
 * socket and frees the channel but leaves the callback registered. The
 * interrupt thread then rebuilds its epoll set with the closed descriptor
 * and panics ("Error adding fd N epoll_ctl, Bad file descriptor"): any
 * process that may connect to the socket and closes at once kills the
 * daemon (three such connections did, before this). The daemon exports this
 * sendmsg (dpdk/ldapfe.dynlist); called from the interrupt thread
 * (rte_thread_is_intr) on a socket whose peer is gone, it reports the
 * message sent. The peer's close then reaches the PMD as end of file on its
 * next read, and its ordinary teardown (callback unregistered, then the
 * socket closed) runs instead of the broken one. Every other call, and
 * every other error, is the plain system call.
 */
#include <errno.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <rte_interrupts.h>

ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
	ssize_t n = syscall(SYS_sendmsg, fd, msg, flags);
	if (n >= 0 || (errno != EPIPE && errno != ECONNRESET) || !rte_thread_is_intr())
		return n;
	size_t len = 0;
	for (size_t i = 0; i < (size_t)msg->msg_iovlen; i++)
		len += msg->msg_iov[i].iov_len;
	return (ssize_t)len;
}
