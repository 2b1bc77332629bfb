// Logs in to the shop with the account's SHOP_API_TOKEN variable.
const response = await fetch(`${process.env.BASE_URL}/api/login`, {
  method: 'POST',
  headers: { Authorization: `Bearer ${process.env.SHOP_API_TOKEN}` },
});
if (!response.ok) throw new Error(`login failed: ${response.status}`);
