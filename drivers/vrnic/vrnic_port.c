// SPDX-License-Identifier: GPL-2.0
/*
 * Port 1 and its netdev.
 *
 * The device reports the MAC of its Ethernet port; the netdev whose
 * permanent address matches is the one whose frames pass through that
 * port, so it is paired with the ib_device (ib_device_set_netdev) and ib_core
 * derives the RoCE GIDs from its IP addresses.  The netdev's state, MTU and
 * address are forwarded to the device, which owns the port state and
 * reports changes as async events.
 */

#include <linux/etherdevice.h>
#include <linux/ip.h>
#include <linux/rtnetlink.h>
#include <rdma/ib_cache.h>

#include "vrnic.h"

/* Called under RTNL. */
static void vrnic_bind_netdev(struct vrnic_dev *dev, struct net_device *ndev)
{
	int err;

	ASSERT_RTNL();
	err = ib_device_set_netdev(&dev->ibdev, ndev, 1);
	if (err) {
		dev_warn(&dev->pdev->dev, "cannot pair with %s: %d\n",
			 ndev ? netdev_name(ndev) : "(none)", err);
		return;
	}
	dev->netdev = ndev;
	dev->netdev_rescan = true;
	if (ndev)
		dev_info(&dev->pdev->dev, "paired with netdev %s\n",
			 netdev_name(ndev));
}

static bool vrnic_is_our_netdev(struct vrnic_dev *dev, struct net_device *ndev)
{
	return net_eq(dev_net(ndev), &init_net) && ndev->addr_len == ETH_ALEN &&
	       ether_addr_equal(ndev->perm_addr, dev->attrs.mac);
}

/* Send the netdev's state to the device, and rescan GIDs after pairing. */
static void vrnic_port_work(struct work_struct *work)
{
	struct vrnic_dev *dev = container_of(work, struct vrnic_dev, port_work);
	u8 mac[ETH_ALEN] = {};
	u32 state = 0, mtu = 0;
	bool rescan, have_mac = false;
	int err;

	rtnl_lock();
	if (dev->netdev) {
		if (netif_running(dev->netdev))
			state |= VRNIC_NETDEV_STATE_UP;
		if (netif_carrier_ok(dev->netdev))
			state |= VRNIC_NETDEV_STATE_CARRIER;
		mtu = dev->netdev->mtu;
		ether_addr_copy(mac, dev->netdev->dev_addr);
		have_mac = true;
	}
	rescan = dev->netdev_rescan;
	dev->netdev_rescan = false;
	rtnl_unlock();

	if (vrnic_dead(dev))
		return;
	err = vrnic_cmd_modify_port(dev, state,
				    clamp_t(u32, mtu, ETH_MIN_MTU, IP_MAX_MTU),
				    have_mac ? mac : NULL);
	if (err)
		ibdev_warn(&dev->ibdev, "MODIFY_PORT failed: %d\n", err);
	if (rescan && test_bit(VRNIC_FLAG_IB_REGISTERED, &dev->flags))
		rdma_roce_rescan_device(&dev->ibdev);
}

static int vrnic_netdev_event(struct notifier_block *nb, unsigned long event,
			      void *ptr)
{
	struct net_device *ndev = netdev_notifier_info_to_dev(ptr);
	struct vrnic_dev *dev = container_of(nb, struct vrnic_dev, netdev_nb);

	/* Unregistering the notifier replays UNREGISTER for every netdev. */
	if (READ_ONCE(dev->port_stopping))
		return NOTIFY_DONE;

	switch (event) {
	case NETDEV_REGISTER:
		if (dev->netdev || !vrnic_is_our_netdev(dev, ndev))
			return NOTIFY_DONE;
		vrnic_bind_netdev(dev, ndev);
		break;
	case NETDEV_UNREGISTER:
		if (ndev != dev->netdev)
			return NOTIFY_DONE;
		dev_info(&dev->pdev->dev, "netdev %s is going away\n",
			 netdev_name(ndev));
		vrnic_bind_netdev(dev, NULL);
		break;
	case NETDEV_UP:
	case NETDEV_DOWN:
	case NETDEV_CHANGE:
	case NETDEV_CHANGEMTU:
	case NETDEV_CHANGEADDR:
		if (ndev != dev->netdev)
			return NOTIFY_DONE;
		break;
	default:
		return NOTIFY_DONE;
	}
	queue_work(system_unbound_wq, &dev->port_work);
	return NOTIFY_OK;
}

/* Dispatch a port change the device reported; any context. */
void vrnic_port_event(struct vrnic_dev *dev, u32 state, u32 phys_state)
{
	struct ib_event ev = {};

	if (state != IB_PORT_ACTIVE && state != IB_PORT_DOWN) {
		dev_warn_ratelimited(&dev->pdev->dev,
				     "bad port state %u from device\n", state);
		return;
	}
	if (xchg(&dev->port_state, (u8)state) == state)
		return;
	dev_dbg(&dev->pdev->dev, "port 1 %s (phys state %u)\n",
		state == IB_PORT_ACTIVE ? "active" : "down", phys_state);
	if (!test_bit(VRNIC_FLAG_IB_REGISTERED, &dev->flags))
		return;
	ev.device = &dev->ibdev;
	ev.element.port_num = 1;
	ev.event = state == IB_PORT_ACTIVE ? IB_EVENT_PORT_ACTIVE :
					     IB_EVENT_PORT_ERR;
	ib_dispatch_event(&ev);
}

/*
 * Registering the notifier replays NETDEV_REGISTER for every existing
 * netdev, which pairs us with ours if it is there; later arrivals come the
 * same way.  Called before ib_register_device() so that ib_core builds the
 * GID table from the netdev's addresses right away.
 */
int vrnic_port_init(struct vrnic_dev *dev)
{
	int err;

	INIT_WORK(&dev->port_work, vrnic_port_work);
	dev->netdev_nb.notifier_call = vrnic_netdev_event;
	err = register_netdevice_notifier(&dev->netdev_nb);
	if (err)
		return err;
	if (!READ_ONCE(dev->netdev))
		dev_info(&dev->pdev->dev,
			 "no netdev with MAC %pM yet; port 1 stays down until one appears\n",
			 dev->attrs.mac);
	/* Tell the device the netdev's state even if no event came. */
	queue_work(system_unbound_wq, &dev->port_work);
	return 0;
}

/* Unregistering the notifier replays NETDEV_UNREGISTER, which unpairs. */
void vrnic_port_uninit(struct vrnic_dev *dev)
{
	WRITE_ONCE(dev->port_stopping, true);
	unregister_netdevice_notifier(&dev->netdev_nb);
	cancel_work_sync(&dev->port_work);
}
