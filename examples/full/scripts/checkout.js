const { expect, test } = require('@playwright/test')

test('checkout API flow', async ({ request }) => {
  const cart = await request.post('https://api.example.com/carts')
  expect(cart.ok()).toBeTruthy()
  const order = await request.post(`https://api.example.com/carts/${(await cart.json()).id}/checkout`)
  expect(order.status()).toBe(201)
})
