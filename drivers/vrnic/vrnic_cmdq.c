// SPDX-License-Identifier: GPL-2.0
/*
 * vrnic admin queue: a ring of commands and a ring of completions in host
 * memory, a pool of wait contexts whose index rides in the command cookie,
 * and credits that bound the commands in flight to the ring depth so the
 * completion ring can never overflow.
 */

#include <linux/dma-mapping.h>
#include <linux/slab.h>

#include "vrnic.h"

/* The cookie is the context index in the low bits, a sequence above. */
static u16 vrnic_cookie(struct vrnic_cmdq *cmdq, u32 idx)
{
	return (u16)((cmdq->seq << cmdq->log_depth) | idx);
}

/* Opcodes are dense, so an opcode indexes its name. */
static const char * const vrnic_cmd_names[] = {
#define VRNIC_AQ_OP(NAME, name, value) __stringify(NAME),
#include "vrnic-aq-ops.h"
#undef VRNIC_AQ_OP
};

const char *vrnic_cmd_str(u32 opcode)
{
	if (opcode >= ARRAY_SIZE(vrnic_cmd_names) || !vrnic_cmd_names[opcode])
		return "UNKNOWN";
	return vrnic_cmd_names[opcode];
}

static int vrnic_status_to_errno(u32 status)
{
	switch (status) {
	case VRNIC_AQ_STATUS_OK:
		return 0;
	case VRNIC_AQ_STATUS_BAD_OPCODE:
		return -EOPNOTSUPP;
	case VRNIC_AQ_STATUS_BAD_PARAM:
		return -EINVAL;
	case VRNIC_AQ_STATUS_BAD_ADDR:
		return -EFAULT;
	case VRNIC_AQ_STATUS_NO_RESOURCES:
		return -ENOMEM;
	case VRNIC_AQ_STATUS_NOT_FOUND:
		return -ENOENT;
	case VRNIC_AQ_STATUS_BUSY:
		return -EBUSY;
	default:
		return -EIO;
	}
}

int vrnic_cmdq_init(struct vrnic_dev *dev)
{
	struct vrnic_cmdq *cmdq = &dev->cmdq;
	struct device *dmadev = &dev->pdev->dev;
	u32 depth = 1U << VRNIC_AQ_LOG_DEPTH;
	u32 i;

	cmdq->dev = dev;
	cmdq->log_depth = VRNIC_AQ_LOG_DEPTH;
	spin_lock_init(&cmdq->sq_lock);
	spin_lock_init(&cmdq->cq_lock);
	sema_init(&cmdq->credits, depth);

	cmdq->ctx = kcalloc(depth, sizeof(*cmdq->ctx), GFP_KERNEL);
	if (!cmdq->ctx)
		return -ENOMEM;
	for (i = 0; i < depth; i++)
		init_completion(&cmdq->ctx[i].done);

	cmdq->sq = dma_alloc_coherent(dmadev, depth * sizeof(*cmdq->sq),
				      &cmdq->sq_dma, GFP_KERNEL);
	if (!cmdq->sq)
		goto err_free_ctx;

	cmdq->cq = dma_alloc_coherent(dmadev, depth * sizeof(*cmdq->cq),
				      &cmdq->cq_dma, GFP_KERNEL);
	if (!cmdq->cq)
		goto err_free_sq;

	vrnic_reg_write64(dev, VRNIC_REG_AQ_SQ_BASE_LO, cmdq->sq_dma);
	vrnic_reg_write64(dev, VRNIC_REG_AQ_CQ_BASE_LO, cmdq->cq_dma);
	vrnic_reg_write(dev, VRNIC_REG_AQ_DEPTH, cmdq->log_depth);
	vrnic_reg_write(dev, VRNIC_REG_AQ_SQ_PI, 0);
	vrnic_reg_write(dev, VRNIC_REG_AQ_CQ_CI, 0);
	return 0;

err_free_sq:
	dma_free_coherent(dmadev, depth * sizeof(*cmdq->sq), cmdq->sq,
			  cmdq->sq_dma);
err_free_ctx:
	kfree(cmdq->ctx);
	return -ENOMEM;
}

/*
 * With vector 0 freed.  Only a reset takes the rings back: they are freed
 * once one is confirmed.
 */
void vrnic_cmdq_destroy(struct vrnic_dev *dev)
{
	struct vrnic_cmdq *cmdq = &dev->cmdq;
	u32 depth = 1U << cmdq->log_depth;

	cmdq->running = false;
	vrnic_reclaim_coherent(dev, depth * sizeof(*cmdq->cq), cmdq->cq,
			       cmdq->cq_dma, -EBUSY);
	vrnic_reclaim_coherent(dev, depth * sizeof(*cmdq->sq), cmdq->sq,
			       cmdq->sq_dma, -EBUSY);
	kfree(cmdq->ctx);
	cmdq->ctx = NULL;
}

/* Consume admin completions; called from the vector 0 handler and when a
 * waiter polls.
 */
void vrnic_cmdq_complete(struct vrnic_cmdq *cmdq)
{
	u32 depth = 1U << cmdq->log_depth;
	struct vrnic_cmd_ctx *ctx;
	struct vrnic_aq_cqe *cqe;
	unsigned long flags;
	u32 budget, info;
	u16 cookie;

	spin_lock_irqsave(&cmdq->cq_lock, flags);
	for (budget = depth; budget; budget--) {
		cqe = &cmdq->cq[vrnic_ring_slot(cmdq->cq_ci, cmdq->log_depth)];
		info = le32_to_cpu(READ_ONCE(cqe->info));
		if (FIELD_GET(VRNIC_AQ_CQE_OWNER_MASK, info) !=
		    vrnic_ring_owner(cmdq->cq_ci, cmdq->log_depth))
			break;
		/*
		 * Do not read the rest of the completion before the owner bit
		 * said the device has finished writing it.
		 */
		dma_rmb();
		cookie = FIELD_GET(VRNIC_AQ_CQE_COOKIE_MASK, info);
		ctx = &cmdq->ctx[vrnic_ring_slot(cookie, cmdq->log_depth)];

		spin_lock(&cmdq->sq_lock);
		if (ctx->in_use && ctx->cookie == cookie && !ctx->aborted) {
			ctx->cqe.result = cqe->result;
			ctx->cqe.result2 = cqe->result2;
			ctx->cqe.info = cpu_to_le32(info);
			complete(&ctx->done);
		} else {
			dev_warn_ratelimited(&cmdq->dev->pdev->dev,
					     "admin completion with stale cookie %#x (ci %u)\n",
					     cookie, cmdq->cq_ci);
		}
		spin_unlock(&cmdq->sq_lock);
		cmdq->cq_ci++;
	}
	vrnic_reg_write(cmdq->dev, VRNIC_REG_AQ_CQ_CI, cmdq->cq_ci);
	spin_unlock_irqrestore(&cmdq->cq_lock, flags);
}

/* The device is dead: wake every waiter; they fail with -EIO. */
void vrnic_cmdq_abort(struct vrnic_cmdq *cmdq)
{
	u32 depth = 1U << cmdq->log_depth;
	unsigned long flags;
	u32 i;

	if (!cmdq->ctx)
		return;
	spin_lock_irqsave(&cmdq->sq_lock, flags);
	cmdq->running = false;
	for (i = 0; i < depth; i++) {
		if (cmdq->ctx[i].in_use && !cmdq->ctx[i].aborted) {
			cmdq->ctx[i].aborted = true;
			complete(&cmdq->ctx[i].done);
		}
	}
	spin_unlock_irqrestore(&cmdq->sq_lock, flags);
}

static struct vrnic_cmd_ctx *vrnic_cmdq_post(struct vrnic_cmdq *cmdq,
					     union vrnic_aq_cmd *cmd)
{
	struct vrnic_cmd_ctx *ctx = NULL;
	unsigned long flags;
	u32 i, depth = 1U << cmdq->log_depth;

	spin_lock_irqsave(&cmdq->sq_lock, flags);
	if (!cmdq->running)
		goto out;
	for (i = 0; i < depth; i++) {
		if (!cmdq->ctx[i].in_use) {
			ctx = &cmdq->ctx[i];
			break;
		}
	}
	/* Credits guarantee a free context. */
	if (WARN_ON_ONCE(!ctx))
		goto out;

	ctx->in_use = true;
	ctx->aborted = false;
	ctx->cookie = vrnic_cookie(cmdq, i);
	cmdq->seq++;
	reinit_completion(&ctx->done);

	cmd->hdr.cookie = cpu_to_le16(ctx->cookie);
	memcpy(&cmdq->sq[vrnic_ring_slot(cmdq->sq_pi, cmdq->log_depth)], cmd,
	       sizeof(*cmd));
	cmdq->sq_pi++;
	/* writel() orders the ring write before the producer index. */
	vrnic_reg_write(cmdq->dev, VRNIC_REG_AQ_SQ_PI, cmdq->sq_pi);
	vrnic_ring_db(cmdq->dev, VRNIC_DB_CHANNEL_CTRL);
out:
	spin_unlock_irqrestore(&cmdq->sq_lock, flags);
	return ctx;
}

static void vrnic_cmdq_put_ctx(struct vrnic_cmdq *cmdq,
			       struct vrnic_cmd_ctx *ctx)
{
	unsigned long flags;

	spin_lock_irqsave(&cmdq->sq_lock, flags);
	ctx->in_use = false;
	spin_unlock_irqrestore(&cmdq->sq_lock, flags);
	up(&cmdq->credits);
}

/**
 * vrnic_cmdq_exec - run one admin command and wait for its completion
 * @cmdq: the admin queue
 * @cmd: the command; its cookie is filled in here
 * @cqe: if not NULL, receives the completion
 *
 * Sleeps.  Returns 0, the errno for the device's status, -EIO when the
 * device is dead, or -ETIMEDOUT, which also declares the device dead.
 */
int vrnic_cmdq_exec(struct vrnic_cmdq *cmdq, union vrnic_aq_cmd *cmd,
		    struct vrnic_aq_cqe *cqe)
{
	struct vrnic_dev *dev = cmdq->dev;
	u32 opcode = le16_to_cpu(cmd->hdr.opcode);
	unsigned long deadline;
	struct vrnic_cmd_ctx *ctx;
	u32 status;
	int err;

	if (vrnic_dead(dev))
		return -EIO;
	if (down_timeout(&cmdq->credits,
			 msecs_to_jiffies(VRNIC_CMD_TIMEOUT_MS)))
		return -ETIMEDOUT;

	ctx = vrnic_cmdq_post(cmdq, cmd);
	if (!ctx) {
		up(&cmdq->credits);
		return -EIO;
	}

	/*
	 * Completions normally arrive by interrupt; poll now and then too, so
	 * that a lost interrupt costs time rather than the device.
	 */
	deadline = jiffies + msecs_to_jiffies(VRNIC_CMD_TIMEOUT_MS);
	while (!wait_for_completion_timeout(&ctx->done, HZ / 10)) {
		vrnic_cmdq_complete(cmdq);
		if (completion_done(&ctx->done))
			break;
		if (time_after(jiffies, deadline)) {
			ibdev_err(&dev->ibdev,
				  "admin command %s timed out (sq_pi %u, device sq_ci %u)\n",
				  vrnic_cmd_str(opcode), cmdq->sq_pi,
				  vrnic_reg_read(dev, VRNIC_REG_AQ_SQ_CI));
			vrnic_dev_fatal(dev, "admin command timed out");
			/* The slot is abandoned with the queue; no put. */
			return -ETIMEDOUT;
		}
	}

	if (ctx->aborted) {
		err = -EIO;
	} else {
		status = FIELD_GET(VRNIC_AQ_CQE_STATUS_MASK,
				   le32_to_cpu(ctx->cqe.info));
		err = vrnic_status_to_errno(status);
		if (err)
			ibdev_dbg(&dev->ibdev, "admin %s failed: status %u\n",
				  vrnic_cmd_str(opcode), status);
		if (cqe)
			*cqe = ctx->cqe;
	}
	vrnic_cmdq_put_ctx(cmdq, ctx);
	return err;
}
