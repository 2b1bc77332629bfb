import { test, expect } from '../fixtures/shop';

test('home page has the shop title @smoke', async ({ shop }) => {
  await expect(shop.page).toHaveTitle('Monform Shop');
});

test('home page greets with a heading @smoke', async ({ shop }) => {
  await expect(shop.heading).toHaveText('Shop');
});
